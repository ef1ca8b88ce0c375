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
