"""Errors of the training stage; each message names the file or setting at fault."""


class TrainingError(RuntimeError):
    """A run that cannot start or continue (missing or empty data, unknown backend)."""


class CheckpointError(TrainingError):
    """A checkpoint that cannot be resumed: corrupt, or written for another run or base model."""


class Diverged(RuntimeError):
    """The run broke the stability rule; it was archived."""
