"""Recover the cpu-profile evaluation transcripts from the committed trace-explorer data.

Why this exists: the published cpu-profile study evaluated 8 configurations x 128
episodes, but the full transcripts (``results/runs/<config>/episodes.jsonl.gz``) lived
only in a DVC cache that has been lost. Slim copies of every episode survive in git as
the trace explorer's JavaScript files (``web/public/data/traces/<config>.js``, written by
``ccl/report/traces.py``): every message, every call's tool/args/outcome/observation, the
effects, final answer, status, end reason, latency and verdict, with the system prompt
stored once in ``prompts.js`` and referenced by a 16-hex hash.

Because the environment is deterministic, a full record can be rebuilt by replaying the
assistant turns through the one episode loop (``ccl.runtime.Episode``). This script does
that and accepts the result only if the replay reproduces the trace *exactly*: messages,
calls, effects, final, status, end reason, and the committed validator's verdict. Any
difference is reported (config, task, first differing field) and the script exits 1
without writing that configuration's files. It also checks, per configuration, that the
success count matches index.js and that re-exporting the recovered episodes through
``ccl.report.traces`` gives the committed JS file byte for byte; and it reports (without
failing) whether the system prompts are the standard / few-shot ones, whether the
recomputed verdicts reproduce metrics.json, and whether the lost file's md5 in dvc.lock
is rebuilt when each row gets its verdict, latency and zero token counts back (true
only where the run generated no tokens: the oracle).

Outputs per configuration (under ``results/runs/<config>/``):

* ``episodes.jsonl.gz``: one row per episode, in trace order, with the task's strata and
  the replayed record; no verdict and no latency (a transcript holds neither judgements
  nor timings), and ``new_tokens``/``prompt_tokens`` null (the traces never held them).
* ``generation.json``: the run's identity and efficiency block (copied from the committed
  ``metrics.json``), the per-episode latencies from the traces, and a provenance sentence.

Run it against the *committed* code, from the repository root::

    git worktree add /tmp/head HEAD
    PYTHONPATH=/tmp/head .venv/bin/python experiments/recover_transcripts/recover.py
    git worktree remove /tmp/head --force

It refuses to run when the imported ``ccl`` package has uncommitted changes
(``--allow-dirty`` overrides that, for experiments only).
"""
from __future__ import annotations

import argparse
import copy
import datetime as dt
import hashlib
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ccl
from ccl.evaluation import metrics as summarise_metrics
from ccl.jsonio import dumps, jsonl_bytes, read_json, read_jsonl, write_json, write_jsonl
from ccl.prompt import system_prompt
from ccl.report.traces import _js, slim_episode
from ccl.runtime import Episode
from ccl.validate import validate

ROOT = Path(__file__).resolve().parents[2]  # the repository whose data is read and written
TRACES = ROOT / "web" / "public" / "data" / "traces"
TASKS = ROOT / "data" / "v1" / "tasks"
RUNS = ROOT / "results" / "runs"
# Evaluated with system_prompt(task, fewshot=True). Run at 2715e6c, when the worked examples
# came after the catalogue; since issue 17 they follow the static head, so a rerun today
# reports every A_fewshot prompt as differing from the one the code now renders.
FEWSHOT_CONFIGS = frozenset({"A_fewshot"})
CALL_FIELDS = ("turn", "tool", "args", "outcome", "observation")  # what slim_episode kept per call
RECORD_FIELDS = ("effects", "final", "status", "end_reason")
STRATA = ("family", "template", "depth")  # copied from the task into both trace and row

# ``window.CCL.<var>`` or ``window.CCL.<var>["<key>"]`` = <JSON>;  (see ccl/report/traces.py:_js)
_ASSIGN_RE = re.compile(r'^window\.CCL\.(\w+)(?:\[("(?:[^"\\]|\\.)*")\])? = (.*);\s*$', re.S)


# ---------------------------------------------------------------- parsing the JS files
def load_js(path: Path) -> tuple[str, str | None, Any]:
    """Return (variable, key, value) of the one assignment in a trace-explorer JS file.

    The file is a guard line (``window.CCL = window.CCL || {}; ...``) followed by one
    assignment whose right-hand side is canonical JSON (with ``</`` written ``<\\/``,
    which JSON decodes back to ``</``).
    """
    lines = path.read_text(encoding="utf-8").split("\n", 1)
    if len(lines) != 2 or not lines[0].startswith("window.CCL = window.CCL || {};"):
        raise ValueError(f"{path}: unexpected header line")
    m = _ASSIGN_RE.match(lines[1])
    if m is None:
        raise ValueError(f"{path}: no 'window.CCL.<var> = <json>;' assignment on line 2")
    var, key, body = m.group(1), m.group(2), m.group(3)
    return var, None if key is None else json.loads(key), json.loads(body)


# ---------------------------------------------------------------- strict comparison
def first_diff(got: Any, want: Any, path: str) -> str | None:
    """The first difference between two JSON values, or None; type-strict (1 != 1.0 != true)."""
    if isinstance(got, dict) and isinstance(want, dict):
        if set(got) != set(want):
            extra, missing = sorted(set(got) - set(want)), sorted(set(want) - set(got))
            return f"{path}: keys differ (replay has extra {extra}, lacks {missing})"
        for k in sorted(got):
            if (d := first_diff(got[k], want[k], f"{path}.{k}")) is not None:
                return d
        return None
    if isinstance(got, list) and isinstance(want, list):
        if len(got) != len(want):
            return f"{path}: length {len(got)} in replay, {len(want)} in trace"
        for i, (g, w) in enumerate(zip(got, want)):
            if (d := first_diff(g, w, f"{path}[{i}]")) is not None:
                return d
        return None
    if isinstance(got, str) and isinstance(want, str) and got != want:
        # long texts: show both around the first differing character
        at = next((i for i, (g, w) in enumerate(zip(got, want)) if g != w), min(len(got), len(want)))
        lo = max(at - 40, 0)
        return (f"{path}: first differs at character {at}: replay {_short(got[lo:at + 80])} "
                f"!= trace {_short(want[lo:at + 80])}")
    if type(got) is not type(want) or got != want:
        return f"{path}: replay {_short(got)} != trace {_short(want)}"
    return None


def _short(value: Any, limit: int = 160) -> str:
    text = dumps(value)
    return text if len(text) <= limit else text[:limit] + "..."


# ---------------------------------------------------------------- replay
@dataclass
class EpisodeResult:
    task_id: str
    row: dict  # the episodes.jsonl.gz row
    replay_diff: str | None  # first difference in the transcript, or None
    verdict_diff: str | None  # first difference between validate() and the trace verdict
    prompt_standard: bool  # system prompt == system_prompt(task, fewshot=<config's>)
    success: bool  # the recomputed verdict's success
    verdict: dict = field(repr=False, default_factory=dict)


def replay(config: str, trace: dict, task: dict, prompts: dict[str, str]) -> EpisodeResult:
    """Rebuild one episode from its trace and compare everything the trace holds."""
    msgs = trace["messages"]
    if not msgs or msgs[0].get("role") != "system" or "prompt" not in msgs[0]:
        raise ValueError(f"{config}/{trace['task_id']}: first message is not a system-prompt reference")
    system = prompts[msgs[0]["prompt"]]
    if hashlib.sha256(system.encode("utf-8")).hexdigest()[:16] != msgs[0]["prompt"]:
        raise ValueError(f"{config}/{trace['task_id']}: prompts.js text does not hash to {msgs[0]['prompt']}")
    # the trace's messages with the hash replaced by the exact prompt text
    want_messages = [{"role": "system", "content": system}] + msgs[1:]
    expected_prompt = system_prompt(task, fewshot=config in FEWSHOT_CONFIGS)

    ep = Episode(task, system=system)
    diff: str | None = None
    for i, m in enumerate(msgs):
        if m["role"] != "assistant":
            continue
        if ep.done:  # the loop ended before the trace did
            diff = f"messages[{i}]: episode ended ({ep.end_reason}) before this assistant turn"
            break
        ep.step(m["content"])
    live = ep.record()
    # validate the live record, as evaluation.episode_row did (a copy: validate must not alter it)
    verdict = validate(task, copy.deepcopy(live))
    # the record as it is stored (JSON), which is also how the trace reached us
    record = json.loads(dumps(live))

    checks: list[tuple[str, Any, Any]] = [
        ("split", task["dataset"], trace["split"]),
        *((f"trace.{k}", task[k], trace[k]) for k in STRATA),
        ("record.messages", record["messages"], want_messages),
        ("record.calls", len(record["calls"]), len(trace["calls"])),
        *((f"record.calls[{i}].{k}", c.get(k), t[k])
          for i, (c, t) in enumerate(zip(record["calls"], trace["calls"])) for k in CALL_FIELDS),
        *((f"record.{k}", record[k], trace[k]) for k in RECORD_FIELDS),
    ]
    for name, got, want in checks:
        if diff is not None:
            break
        diff = first_diff(got, want, name)
    verdict_json = json.loads(dumps(verdict))
    row = {"task_id": task["id"], "dataset": task["dataset"], "template": task["template"],
           "family": task["family"], "depth": task["depth"], "graph_seen": task.get("graph_seen"),
           "faults": bool(task["faults"]), "new_tokens": None, "prompt_tokens": None, "record": record}
    return EpisodeResult(task_id=task["id"], row=row, replay_diff=diff,
                         verdict_diff=first_diff(verdict_json, trace["verdict"], "verdict"),
                         prompt_standard=system == expected_prompt, success=bool(verdict["success"]),
                         verdict=verdict_json)


# ---------------------------------------------------------------- provenance helpers
def git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def check_code_is_committed(allow_dirty: bool) -> str:
    """The commit of the imported ``ccl``; exit unless its files match that commit."""
    pkg = Path(ccl.__file__).resolve().parent
    tree = Path(git("rev-parse", "--show-toplevel", cwd=pkg))
    sha = git("rev-parse", "HEAD", cwd=tree)
    dirty = git("status", "--porcelain", "--", "ccl", cwd=tree)
    print(f"ccl imported from {pkg} (commit {sha[:12]}{', DIRTY' if dirty else ''})")
    if dirty and not allow_dirty:
        sys.exit("the imported ccl has uncommitted changes; run with PYTHONPATH=<a worktree of HEAD>\n" + dirty)
    return sha


def locked_md5(path: str) -> str | None:
    """The md5 that dvc.lock records for an output path (the first stage listing it)."""
    m = re.search(rf"- path: {re.escape(path)}\n\s+hash: md5\n\s+md5: ([0-9a-f]{{32}})",
                  (ROOT / "dvc.lock").read_text(encoding="utf-8"))
    return m.group(1) if m else None


def load_tasks() -> dict[str, dict[str, dict]]:
    """split -> task id -> task, for every task file."""
    return {p.stem: {t["id"]: t for t in read_jsonl(p)} for p in sorted(TASKS.glob("*.jsonl"))}


# ---------------------------------------------------------------- main
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--allow-dirty", action="store_true", help="accept an imported ccl with uncommitted edits")
    ap.add_argument("--dry-run", action="store_true", help="check only; write nothing")
    args = ap.parse_args()

    code_sha = check_code_is_committed(args.allow_dirty)
    head = git("rev-parse", "HEAD")
    if code_sha != head:
        print(f"note: ccl is from commit {code_sha[:12]}, the data from {head[:12]}")
    today = dt.date.today().isoformat()

    _, _, index = load_js(TRACES / "index.js")
    _, _, prompts = load_js(TRACES / "prompts.js")
    tasks = load_tasks()

    failures: list[str] = []
    for config, entry in index.items():
        var, key, traces = load_js(TRACES / Path(entry["file"]).name)
        if (var, key) != ("traces", config):
            raise ValueError(f"{entry['file']}: assigns window.CCL.{var}[{key!r}], expected traces[{config!r}]")
        if len(traces) != entry["episodes"]:
            failures.append(f"{config}: {len(traces)} episodes in the file, index says {entry['episodes']}")
        ids = [t["task_id"] for t in traces]
        if len(set(ids)) != len(ids):
            failures.append(f"{config}: duplicate task ids; latency_s cannot be keyed by task")

        results = [replay(config, t, tasks[t["split"]][t["task_id"]], prompts) for t in traces]
        bad = [r for r in results if r.replay_diff or r.verdict_diff]
        for r in bad:
            failures.append(f"{config} / {r.task_id}: {r.replay_diff or r.verdict_diff}")
        n_replay = sum(r.replay_diff is None for r in results)
        n_verdict = sum(r.verdict_diff is None for r in results)
        n_success = sum(r.success for r in results)
        n_prompt = sum(r.prompt_standard for r in results)
        kind = "few-shot" if config in FEWSHOT_CONFIGS else "standard"
        print(f"{config}: episodes={len(results)} replay_identical={n_replay} verdict_identical={n_verdict} "
              f"success={n_success} system_prompt_matches_{kind}={n_prompt}/{len(results)}")
        if n_success != entry["success"]:
            failures.append(f"{config}: {n_success} successes on replay, index.js says {entry['success']}")

        # report only: do the recomputed verdicts reproduce the committed metrics.json?
        committed = read_json(RUNS / config / "metrics.json")
        splits = list(dict.fromkeys(t["split"] for t in traces))  # order of first appearance
        again = summarise_metrics([{"dataset": r.row["dataset"], "verdict": r.verdict} for r in results],
                                  committed["splits"].keys())
        metrics_diff = next((d for part in ("splits", "pooled_main")
                             if (d := first_diff(json.loads(dumps(again[part])), committed[part], part))), None)
        print(f"  metrics.json splits/pooled_main recomputed exactly: {metrics_diff is None}"
              + (f" (first difference: {metrics_diff})" if metrics_diff else ""))

        # round trip: the recovered rows, with the verdicts and latencies put back, must give
        # the committed trace file byte for byte through the site's own exporter
        rebuilt: dict[str, str] = {}
        slim = [slim_episode({**r.row, "verdict": r.verdict, "latency_s": t["latency_s"]}, rebuilt)
                for r, t in zip(results, traces)]
        same_bytes = _js("traces", config, slim) == (TRACES / Path(entry["file"]).name).read_bytes()
        if not same_bytes or any(prompts.get(h) != text for h, text in rebuilt.items()):
            failures.append(f"{config}: re-exporting the recovered episodes does not reproduce {entry['file']}")
        print(f"  re-export reproduces {entry['file']} byte for byte: {same_bytes}")

        # report only: the lost file's checksum is in dvc.lock. Its rows also held the verdict,
        # the latency and the token counts; with counts of 0 (true of the oracle, which
        # generates no tokens) the recovered rows should rebuild it exactly.
        lost = locked_md5(f"results/runs/{config}/episodes.jsonl.gz")
        full = [{**r.row, "verdict": r.verdict, "latency_s": t["latency_s"], "new_tokens": 0, "prompt_tokens": 0}
                for r, t in zip(results, traces)]
        same = hashlib.md5(jsonl_bytes(full, compress=True)).hexdigest() == lost
        print(f"  dvc.lock md5 of the lost episodes file ({lost}) rebuilt with 0 tokens per episode: {same}"
              + ("" if same or config == "oracle" else " (expected: this run generated tokens)"))

        if bad or args.dry_run:
            continue
        out = RUNS / config
        write_jsonl(out / "episodes.jsonl.gz", [r.row for r in results])
        write_json(out / "generation.json", {
            **{k: committed[k] for k in ("name", "profile", "model", "backend", "adapter")},
            "splits": splits,
            "efficiency": committed["efficiency"],
            "latency_s": {t["task_id"]: t["latency_s"] for t in traces},
            "provenance": (f"recovered on {today} by experiments/recover_transcripts/recover.py from the "
                           f"committed trace explorer data at git commit {head} by replaying every assistant "
                           "turn through the episode loop; per-episode token counts were not in the traces "
                           "and are null"),
        })

    if failures:
        print(f"\nFIDELITY CHECK FAILED ({len(failures)} problems); nothing written for the affected configs:",
              file=sys.stderr)
        for f in failures:
            print("  " + f, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
