"""Stage export_web: the static site (report, methods, figures, trace explorer) from the artifacts."""
from __future__ import annotations

from pathlib import Path

from ..report.artifacts import load_artifacts
from ..report.learning import every_table
from ..report.site import write_site


def run(root: Path, out: Path, dvc_yaml: Path, params: Path) -> dict:
    """Write the site under ``out`` from the artifacts of ``root``; the methods page lists the
    commands of ``dvc_yaml`` (foreach items from ``params``). Returns what was written."""
    art = load_artifacts(root)
    return write_site(root, art, every_table(art), out, dvc_yaml, params)
