"""What the pipeline writes and reads back: canonical JSON and atomic writes (``jsonio``, the
one writer), SHA-256 manifests and their verification, dvc.lock anchors, resumable chunk logs,
reading a stage's input rows, and the error boundary every stage script runs inside.

Layer: artifacts. May import stats and the base modules only.
"""
