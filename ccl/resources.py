"""Resource measurements shared by the stages that report them (evaluation, training)."""
from __future__ import annotations

import resource


def peak_memory_gb() -> float:
    """Peak resident memory of this process (Linux reports KiB), or CUDA peak if larger."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    try:
        import torch
        if torch.cuda.is_available():
            rss = max(rss, torch.cuda.max_memory_allocated() / 2**30)
    except ImportError:
        pass
    return round(rss, 2)
