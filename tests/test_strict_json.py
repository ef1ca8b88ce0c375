"""Every record the project writes is strict JSON (issue 38): one writer (ccl.artifacts.jsonio.json_text)
never writes NaN or Infinity; model text's non-finite numbers become the strings json spells them with,
the same in episode logs, the site's trace data and the server's responses. The fuzzer's episodes,
with injected tool faults, keep the world equal to the replay of their effects."""
from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from ccl.artifacts.jsonio import dumps, finite_only, json_text, read_jsonl, write_json, write_jsonl
from ccl.episode.runtime import Episode
from ccl.report.traces import js_assign
from ccl.serve.episodes import json_line
from ccl.world.tasks import generate_task
from scripts.fuzz_episodes import fuzz, strict_json

NAN_ACTION = '{"calls": [{"tool": "calculate", "args": {"expression": NaN}}, {"tool": "x", "args": {"y": -Infinity}}]}'


def nan_record() -> dict:
    ep = Episode(generate_task("sel_calc", 0))
    ep.step(NAN_ACTION)
    ep.step('{"final": {"answer": Infinity}, "status": "done"}')
    return ep.record()


def test_the_fuzzers_records_are_strict_json_and_its_worlds_equal_the_replay_of_effects():
    counts = fuzz(episodes=150, seed=1)
    assert counts["episodes"] == 150 and counts["calls"] > 300 and counts["effects"] > 3
    assert counts["failures_injected"] > 5 and set(counts["failures_by_kind"]) == {"error", "crash", "slow_crash",
                                                                                   "hang"}
    assert counts["records_with_non_finite_text"] > 20  # the fuzzer does write NaN and Infinity as model text
    assert counts["state_mismatches"] == 0 and counts["non_json_records"] == 0, counts


def test_a_record_with_nan_text_is_written_with_the_strings_json_spells():
    record = nan_record()
    assert record["calls"][0]["args"]["expression"] != record["calls"][0]["args"]["expression"]  # NaN in memory
    line = dumps(record)
    assert strict_json(line)
    back = json.loads(line)
    assert back["calls"][0]["args"] == {"expression": "NaN"} and back["calls"][1]["args"] == {"y": "-Infinity"}
    assert back["final"] == '{"answer":"Infinity"}'  # a structured final is read as its (strict) JSON text
    assert back["calls"][0]["outcome"] == "invalid_args"  # NaN was refused by the schema, as before


def test_json_text_gives_json_dumps_bytes_for_finite_values_and_refuses_other_faults():
    obj = {"b": [1.5, -0.0, 10**30, "NaN"], "a": {"é": None}}
    assert dumps(obj) == json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert json_text(obj, indent=2) == json.dumps(obj, indent=2)
    assert json_text({"x": float("nan")}, allow_nan=True) == '{"x": "NaN"}'  # allow_nan is not an option
    assert finite_only([float("inf"), (float("-inf"), 1)]) == ["Infinity", ["-Infinity", 1]]
    loop: list = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular"):
        json_text(loop)


def test_files_written_with_nan_read_back_as_strict_json(tmp_path):
    record = nan_record()
    write_jsonl(tmp_path / "e.jsonl.gz", [{"record": record}])
    write_json(tmp_path / "r.json", record)
    assert strict_json((tmp_path / "r.json").read_text())
    (row,) = read_jsonl(tmp_path / "e.jsonl.gz")
    assert row["record"]["calls"][1]["args"] == {"y": "-Infinity"}


def test_the_site_and_the_server_carry_a_nan_transcript_as_strict_json():
    record = nan_record()
    script = js_assign("traces", "run", [record]).decode()
    body = script.splitlines()[1].split(" = ", 1)[1].rstrip(";")  # window.CCL.traces["run"] = <JSON>;
    assert strict_json(body) and "NaN" in body
    line = json_line({"event": "end", "record": record}).decode()
    assert strict_json(line)
    node = shutil.which("node")
    if node:  # the browser's parser itself, where node is installed
        for text in (body, line):
            subprocess.run([node, "-e", "JSON.parse(require('fs').readFileSync(0, 'utf8'))"], input=text.encode(),
                           check=True)
