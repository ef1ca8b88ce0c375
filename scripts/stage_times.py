"""Per-stage wall times of a timed `dvc repro`, as the README's table.

    bash scripts/timed_repro.sh /tmp/repro.log      # the README's first command, every line time-stamped
    python -m scripts.stage_times /tmp/repro.log    # a Markdown table: stage, wall time; then the total
    python -m scripts.stage_times DIR/repro.log.gz --json DIR/stage_times.json --machine "..." --commit abc1234
                                                    # also the record the report reads (gzipped logs too)

Each log line is ``<unix seconds> <text>``. A stage runs from its "Running stage 'NAME':" line
to the lock-file update that follows it (or the next stage's start); the install is the time
from the first line to the first stage; the total is first line to last. The record (--json) holds
the same seconds unrounded, the run's exit status (timed_repro.sh's last line, ``exit N``), the stage
DVC names as failed (``ERROR: failed to reproduce 'NAME'``) and the start time; --machine and --commit
add what the log cannot know.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import sys
import time
from pathlib import Path

from ccl.report.run_time import INSTALL_STEP, TOTAL_STEP, minutes

STAGE = re.compile(r"^Running stage '(?P<name>[^']+)':")
LOCK = re.compile(r"^Updating lock file")
EXIT = re.compile(r"^exit (?P<status>\d+)$")
FAILED = re.compile(r"^ERROR: failed to reproduce '(?P<name>[^']+)'")


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


def record(lines: list[str]) -> dict:
    """The run's record: install, stages and total seconds, exit status, failed stage, start (UTC)."""
    stages, install, total = parse(lines)
    texts = [ln.partition(" ")[2] for ln in lines]
    status = next((int(m["status"]) for t in reversed(texts) if (m := EXIT.match(t))), None)
    failed = next((m["name"] for t in texts if (m := FAILED.match(t))), None)
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(float(lines[0].partition(" ")[0])))
    return {"started_utc": started, "exit_status": status, "failed_stage": failed, "install_s": install,
            "stages": [{"stage": n, "seconds": s} for n, s in stages], "total_s": total}


def table(rec: dict) -> str:
    """The Markdown table of a record, as the README shows it."""
    rows = [(INSTALL_STEP, minutes(rec["install_s"])), *((r["stage"], minutes(r["seconds"])) for r in rec["stages"]),
            (TOTAL_STEP, f"**{minutes(rec['total_s'])}**")]
    return "| step | wall time |\n| --- | --- |\n" + "".join(f"| {a} | {b} |\n" for a, b in rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("log", type=Path, help="the time-stamped log of scripts/timed_repro.sh (.gz: gzipped)")
    ap.add_argument("--json", type=Path, help="also write the run's record here")
    ap.add_argument("--machine", help="the machine it ran on, for the record")
    ap.add_argument("--commit", help="the commit the fresh clone was at, for the record")
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    raw = args.log.read_bytes()
    # split on newlines only: tqdm redraws with bare carriage returns inside a stamped line
    text = (gzip.decompress(raw) if args.log.suffix == ".gz" else raw).decode("utf-8")  # no read_text: \r
    rec = record([ln for ln in text.split("\n") if ln])
    print(table(rec), end="")
    if args.json:
        rec = {"log": args.log.name, "log_sha256": hashlib.sha256(raw).hexdigest(), "machine": args.machine,
               "commit": args.commit, **rec}
        args.json.write_text(json.dumps(rec, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
