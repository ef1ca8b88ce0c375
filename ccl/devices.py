"""Which torch device a stage runs on (torch imported only when asked)."""
from __future__ import annotations


def pick_device(device: str | None = None) -> str:
    """The given device, else the best available: cuda, then mps, then cpu."""
    if device:
        return device
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def cpu_threads(requested: int | None = None) -> int:
    """Threads for CPU matrix work: ``requested``, capped at the cores this process may use (its CPU
    affinity, which a container or ``taskset`` narrows; ``os.cpu_count`` counts the whole machine)."""
    import os

    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(requested or usable, usable))
