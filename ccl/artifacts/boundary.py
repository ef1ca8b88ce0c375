"""The error boundary of every stage entry point: faults a user can fix become one line.

A stage that cannot write (a read-only folder, a full disk, no permission) ends with one
line naming the path and the remedy, never a traceback; so does any ``StageError`` (a
bad config, a missing or corrupt input, an unknown model). Outputs are written to a
temporary name and renamed (``ccl.artifacts.jsonio``), so a failed write never leaves a partial
file that looks complete; resumable stages keep their finished chunks for the rerun.
"""
from __future__ import annotations

import errno
import sys
from typing import Callable

from ..errors import StageError

REMEDIES = {
    errno.ENOSPC: "free disk space and rerun the stage (finished work is kept)",
    errno.EDQUOT: "free disk space (quota) and rerun the stage (finished work is kept)",
    errno.EROFS: "the file system is read-only: choose a writable output folder or remount it",
    errno.EACCES: "make the folder writable for this user, or choose another output folder",
    errno.EPERM: "make the folder writable for this user, or choose another output folder",
}


def describe(e: OSError) -> str:
    """One line: what failed, on which path, and what to do."""
    path = e.filename if e.filename is not None else "(unknown path)"
    remedy = REMEDIES.get(e.errno, "check the path and rerun the stage")
    return f"{e.strerror or type(e).__name__}: {path}; {remedy}"


def run_stage(name: str, main: Callable[[list[str] | None], int], argv: list[str] | None = None) -> int:
    """Run a stage's ``main``; a StageError or a file-system fault prints one line and returns
    the error's exit status (2; 3 for a training run that broke the stability rule)."""
    try:
        return main(argv)
    except StageError as e:
        print(f"{name}: {e}", file=sys.stderr)
        return e.exit_code
    except OSError as e:
        print(f"{name}: {describe(e)}", file=sys.stderr)
        return 2
