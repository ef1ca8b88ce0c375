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


# ---------------------------------------------------------------- the CPU, as a record names it
# Kernel paths for bfloat16 products on x86, fastest first: AMX tiles (Intel Sapphire Rapids and later),
# then AVX-512 BF16 dot products (Intel Cooper Lake, AMD Zen 4 and later); "none": neither flag (an x86
# CPU without bfloat16 units, where bfloat16 is converted and computed in float32 and gains nothing, or
# another architecture, whose flags this does not read); "unknown": no /proc/cpuinfo.
KERNEL_PATHS = (("amx-bf16", ("amx_bf16", "amx_tile")), ("avx512-bf16", ("avx512_bf16",)))


def _cpuinfo() -> dict[str, str]:
    """The first processor's fields of /proc/cpuinfo (empty where there is none: macOS, Windows)."""
    from pathlib import Path

    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return {}
    fields: dict[str, str] = {}
    for line in text.split("\n\n", 1)[0].splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    return fields


def kernel_path(flags: set[str]) -> str:
    """The bfloat16 kernel path the flags allow: "amx-bf16", "avx512-bf16" or "none"."""
    return next((name for name, need in KERNEL_PATHS if all(f in flags for f in need)), "none")


def cpu_record() -> dict:
    """What a benchmark or a run names its CPU by: the model name, the bfloat16 kernel path its flags
    allow, torch's vector level and the threads torch uses (timings compare only within one record)."""
    import platform

    import torch

    info = _cpuinfo()
    return {"cpu": info.get("model name") or platform.processor() or platform.machine(),
            "kernel_path": kernel_path(set(info.get("flags", "").split())) if info else "unknown",
            "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(), "threads": torch.get_num_threads()}
