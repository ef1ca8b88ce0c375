"""One entry point per pipeline stage: ``ccl.stages.<stage>.run(...)``.

Each ``run`` takes the stage's configuration, its input paths and its output paths (the
scripts in scripts/ choose them and parse the command line), does the stage's work and
returns what the script reports. Faults a user can fix raise ``ccl.errors.StageError``
with a one-line message; ``ccl.artifacts.boundary.run_stage`` prints it.

Layer: stages, the top. May import every layer.
"""
