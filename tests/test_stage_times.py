"""scripts/stage_times.py: per-stage wall times from a time-stamped dvc repro log, hand-worked."""
from __future__ import annotations

import pytest

from scripts.stage_times import main, minutes, parse

LOG = """100 Collecting torch
280 Running stage 'build_datasets':
281 > python -m scripts.build_datasets --out data/v1
290 Updating lock file 'dvc.lock'
291 Running stage 'train@C_s0':
400.5 Updating lock file 'dvc.lock'
401 Running stage 'analyze':
430 exit 0""".splitlines()


def test_stages_run_from_their_start_to_the_lock_update():
    stages, install, total = parse(LOG)
    assert stages == [("build_datasets", 10.0), ("train@C_s0", 109.5), ("analyze", 29.0)]
    assert install == 180.0 and total == 330.0
    assert minutes(109.5) == "1 min 50 s" and minutes(10) == "10 s"


def test_a_line_without_a_time_stamp_is_named():
    with pytest.raises(SystemExit, match="line 2"):
        parse(["1 ok", "Running stage 'x':"])


def test_a_progress_bar_carriage_return_inside_a_stamped_line_is_not_a_line(tmp_path, capsys):
    # tqdm redraws with bare \r; the time-stamping loop splits on \n only, so a \r sits
    # inside a stamped line and must not start an unstamped one
    log = tmp_path / "repro.log"
    log.write_bytes(b"100.0 install\n"
                    b"110.0 Running stage 'distill':\n"
                    b"130.0 \rpass1:   0%|  | 0/128\rpass1: 100%|  | 128/128\n"
                    b"170.0 Updating lock file 'dvc.lock'\n")
    assert main([str(log)]) == 0
    out = capsys.readouterr().out
    assert "| install (before the first stage) | 10 s |" in out
    assert "| distill | 1 min 0 s |" in out
    assert "| **all, install included** | **1 min 10 s** |" in out
