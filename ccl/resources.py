"""Resource measurements shared by the stages that report them (evaluation, training)."""
from __future__ import annotations

import resource
import sys


def _rss_peak_gb(platform: str = sys.platform) -> float:
    """Peak resident set of this process: getrusage reports KiB on Linux but bytes on macOS."""
    unit = 1 if platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * unit / 2**30


def _accelerator_peak_gb() -> float:
    """Peak memory the accelerator allocated for this process: CUDA through torch, Metal through mlx,
    each only if already loaded (measuring must not import a framework and grow the process)."""
    peak = 0.0
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        peak = torch.cuda.max_memory_allocated() / 2**30
    mx = sys.modules.get("mlx.core")
    if mx is not None and getattr(getattr(mx, "metal", None), "is_available", lambda: False)():
        peak = max(peak, mx.get_peak_memory() / 2**30)
    return peak


def peak_memory_gb() -> float:
    """Peak resident memory of this process, or the accelerator's peak if larger, in GiB."""
    return round(max(_rss_peak_gb(), _accelerator_peak_gb()), 2)
