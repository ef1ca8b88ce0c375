"""The command-line options every stage shares, declared once so that they mean the same everywhere:
``--profile`` (default: params.yaml's), ``--params`` (the parameters file) and ``--data`` (the data
root, data/v1, whose tasks/ folder holds the task splits)."""
from __future__ import annotations

import argparse
from pathlib import Path

from .layout import DATA, PARAMS


def stage_parser(doc: str | None, *, params: bool = True, data: bool = True) -> argparse.ArgumentParser:
    """An argument parser showing the script's docstring, with the shared options it takes."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    if params:
        ap.add_argument("--profile", default=None, help="paper | paper-cuda | cpu | cpu-scale | smoke (default: params.yaml's profile)")
        ap.add_argument("--params", type=Path, default=PARAMS, help="parameters file (default params.yaml)")
    if data:
        ap.add_argument("--data", type=Path, default=DATA,
                        help="data root (default data/v1); task splits are read from its tasks/ folder")
    return ap
