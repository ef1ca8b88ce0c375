"""Errors of the training stage; each message names the file or setting at fault."""
from __future__ import annotations

from ..errors import StageError


class TrainingError(StageError, RuntimeError):
    """A run that cannot start or continue (missing or empty data, unknown backend)."""


class CheckpointError(TrainingError):
    """A checkpoint that cannot be resumed: corrupt, or written for another run or base model."""


class Diverged(StageError, RuntimeError):
    """The run broke the stability rule; it was archived (exit status 3)."""

    exit_code = 3


def check_fingerprint(path, theirs: dict | None, ours: dict) -> None:
    """Refuse a checkpoint written for another run, recipe, base model or training set."""
    theirs = theirs or {}
    if theirs != ours:
        diff = sorted(k for k in set(theirs) | set(ours) if theirs.get(k) != ours.get(k))
        raise CheckpointError(f"{path}: checkpoint was written for another run or base model (differs in "
                              f"{', '.join(diff)}); delete it or restore the original settings")
