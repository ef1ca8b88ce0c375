"""Peak memory is read in the unit each platform reports."""
from __future__ import annotations

import resource
from types import SimpleNamespace

from ccl import resources


def test_peak_rss_is_kib_on_linux_and_bytes_on_macos(monkeypatch):
    three_gib_kib = SimpleNamespace(ru_maxrss=3 * 2**20)  # what Linux reports for 3 GiB
    monkeypatch.setattr(resource, "getrusage", lambda who: three_gib_kib)
    assert resources._rss_peak_gb("linux") == 3.0
    three_gib_bytes = SimpleNamespace(ru_maxrss=3 * 2**30)  # what macOS reports for 3 GiB
    monkeypatch.setattr(resource, "getrusage", lambda who: three_gib_bytes)
    assert resources._rss_peak_gb("darwin") == 3.0
    # read as KiB, the macOS figure would claim 3 TiB
    assert resources._rss_peak_gb("linux") == 3 * 1024


def test_metal_peak_counts_when_mlx_is_loaded(monkeypatch):
    fake_mx = SimpleNamespace(metal=SimpleNamespace(is_available=lambda: True), get_peak_memory=lambda: 5 * 2**30)
    monkeypatch.setitem(__import__("sys").modules, "mlx.core", fake_mx)
    monkeypatch.setattr(resource, "getrusage", lambda who: SimpleNamespace(ru_maxrss=2**20))  # 1 GiB on Linux
    assert resources.peak_memory_gb() == 5.0
