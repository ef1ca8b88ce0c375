"""The stage scripts, run as modules from the repository root (``python -m scripts.train B_s0``):
each parses its arguments and calls the stage's entry point in ``ccl.stages``."""
