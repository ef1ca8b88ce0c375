"""Per-stage wall times of a timed `dvc repro`, as the README's table.

    bash scripts/timed_repro.sh /tmp/repro.log      # the README's first command, every line time-stamped
    python -m scripts.stage_times /tmp/repro.log    # a Markdown table: stage, wall time; then the total

Each log line is ``<unix seconds> <text>``. A stage runs from its "Running stage 'NAME':" line
to the lock-file update that follows it (or the next stage's start); the install is the time
from the first line to the first stage; the total is first line to last.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

STAGE = re.compile(r"^Running stage '(?P<name>[^']+)':")
LOCK = re.compile(r"^Updating lock file")


def parse(lines: list[str]) -> tuple[list[tuple[str, float]], float, float]:
    """(stage, seconds) in run order, the seconds before the first stage, and the total seconds."""
    stamped = []
    for i, line in enumerate(lines, 1):
        stamp, _, text = line.partition(" ")
        try:
            stamped.append((float(stamp), text))
        except ValueError:
            raise SystemExit(f"line {i}: expected '<unix seconds> <text>', got {line[:60]!r}") from None
    if not stamped:
        raise SystemExit("empty log")
    stages, current = [], None
    for t, text in stamped:
        m = STAGE.match(text)
        if m:
            if current:
                stages.append((current[0], t - current[1]))
            current = (m["name"], t)
        elif current and LOCK.match(text):
            stages.append((current[0], t - current[1]))
            current = None
    if current:
        stages.append((current[0], stamped[-1][0] - current[1]))
    first_stage = next((t for t, text in stamped if STAGE.match(text)), stamped[-1][0])
    return stages, first_stage - stamped[0][0], stamped[-1][0] - stamped[0][0]


def minutes(seconds: float) -> str:
    m, s = divmod(round(seconds), 60)
    return f"{m} min {s} s" if m else f"{s} s"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        raise SystemExit("usage: python -m scripts.stage_times LOG")
    # split on newlines only: tqdm redraws with bare carriage returns inside a stamped line
    text = Path(args[0]).read_bytes().decode("utf-8")  # read_text would turn each \r into a newline
    stages, install, total = parse([ln for ln in text.split("\n") if ln])
    print("| step | wall time |\n| --- | --- |")
    print(f"| install (before the first stage) | {minutes(install)} |")
    for name, seconds in stages:
        print(f"| {name} | {minutes(seconds)} |")
    print(f"| **all, install included** | **{minutes(total)}** |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
