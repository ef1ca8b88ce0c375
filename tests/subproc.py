"""Run a repository script in a fresh interpreter from the repository root (tests import this)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_py(*args: str, ok: bool = True) -> subprocess.CompletedProcess:
    """``python *args`` in ROOT; with ``ok`` a non-zero exit fails the test with the output's tail."""
    r = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True)
    if ok:
        assert r.returncode == 0, f"{' '.join(args[:2])} failed:\n" + r.stdout[-2000:] + r.stderr[-3000:]
    return r
