"""The base of every error a user can fix: a stage ends with its one-line message.

Each stage's error type (a bad config, a missing input, an unknown model, a training run
that cannot resume, ...) derives from ``StageError``, so the one error boundary
(``ccl.artifacts.boundary.run_stage``) prints its message without a traceback and exits with
``exit_code``. Dependency-free, so deriving from it adds nothing to a stage's dependencies.
"""
from __future__ import annotations


class StageError(Exception):
    """A problem with the stage's inputs or settings; the message names the place and the remedy."""

    exit_code = 2


class InputError(StageError):
    """A missing or corrupt input file; the message names it and the stage that makes it."""
