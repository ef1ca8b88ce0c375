"""Teacher distillation (acceptance filter, resumable passes) and the SFT variants."""
from __future__ import annotations

import copy
import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ccl.artifacts.jsonio import read_json, read_jsonl, sha256_file, write_jsonl
from ccl.artifacts.resume import ChunkLog, chunked
from ccl.data.acceptance import REJECTION_REASONS, AcceptanceConfig, AcceptanceError, judge_pass, judged_row, pass2_tasks, rejection_reasons, ruler_change
from ccl.data.distill import run_pass
from ccl.data.teacher import DistillConfig
from ccl.data.variants import BuildSFTConfig, build_variants, describe_variant, teacher_rows
from ccl.episode.evaluation import transcript_row
from ccl.episode.oracle import OraclePolicy
from ccl.episode.rollout import rollout
from ccl.episode.runtime import Action, Episode, format_action
from ccl.judge.validate import validate
from ccl.vocabulary import RULER1, RULER2
from ccl.world.tasks import generate_task

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------ acceptance filter
def oracle_actions(task: dict) -> list[Action]:
    ep, policy, actions = Episode(task), OraclePolicy(), []
    memory = policy.memory()
    while not ep.done:
        actions.append(copy.deepcopy(policy.decide(ep, memory)))
        ep.step(format_action(actions[-1]))
    return actions


def replay_record(task: dict, texts: list[str]) -> dict:
    ep = Episode(task)
    for text in texts:
        ep.step(text)
    assert ep.done
    return ep.record()


def replay(task: dict, texts: list[str]) -> dict:
    return validate(task, replay_record(task, texts))


TASK = generate_task("ch_order_customer", 0, "train")  # get_order -> find_contact(customer) -> answer
ACTS = oracle_actions(TASK)
GET_ORDER = ACTS[0].calls[0]


def texts(actions: list[Action]) -> list[str]:
    return [format_action(a) for a in actions]


# Each hand-made episode is the oracle's, with exactly one flaw; the expected rejection is hand-worked.
FLAWED = {
    "not_success": texts(ACTS[:-1] + [Action(final="Done.", status="done")]),  # the answer misses the facts
    "parse_error": ["Let me look that order up."] + texts(ACTS),
    "hallucinated_tools": texts([Action(calls=[{"tool": "lookup_everything", "args": {}}])] + ACTS),
    "invalid_args": texts([Action(calls=[{"tool": "get_order", "args": {"order_id": 99541}}])] + ACTS),
    "unnecessary_calls": texts(ACTS[:-1] + [Action(calls=[GET_ORDER])] + ACTS[-1:]),  # repeats a done call
    # find_contact issued in the same turn as get_order, before the customer's name was returned
    "dependency_unsafe": texts([Action(calls=ACTS[0].calls + ACTS[1].calls)] + ACTS[2:]),
}


def test_clean_oracle_episode_is_accepted():
    verdict = replay(TASK, texts(ACTS))
    assert rejection_reasons(verdict, verdict["success"]) == []


@pytest.mark.parametrize("reason", REJECTION_REASONS)
def test_each_flaw_is_rejected_for_exactly_its_reason(reason):
    verdict = replay(TASK, FLAWED[reason])
    # a dependent call issued before its prerequisite returned also fails strict success
    expected = ["not_success", reason] if reason == "dependency_unsafe" else [reason]
    assert rejection_reasons(verdict, verdict["success"]) == expected
    # every flaw except the wrong answer "succeeds" by the write-up's definition: the filter is stricter
    assert verdict["success_writeup"] is (reason != "not_success")
    assert rejection_reasons(verdict, verdict["success_writeup"]) == [reason]


def test_garbage_output_is_an_ordinary_rejection():
    verdict = replay(TASK, ["{{{{", "]]] not json"])
    assert set(rejection_reasons(verdict, verdict["success"])) == {"not_success", "parse_error"}


def test_the_success_that_counts_is_the_one_given_and_cleanliness_stays_ruler_1s():
    # a clean episode that ruler 2 fails is rejected for not_success alone; a success with a parse
    # error is still rejected for it, whichever ruler passed it
    clean = replay(TASK, texts(ACTS))
    assert rejection_reasons(clean, False) == ["not_success"]
    noisy = replay(TASK, FLAWED["parse_error"])
    assert rejection_reasons(noisy, True) == ["parse_error"]


def _judged(task_id: str, template: str, ruler1: bool, ruler2: bool) -> dict:
    # accepted by ruler 1 here: ruler_change reads each ruler's own flag, whichever ruler decided ``accepted``
    return {"task_id": task_id, "pass": 1, "template": template, "accepted_ruler1": ruler1, "accepted_ruler2": ruler2,
            "accepted": ruler1, RULER2: {"reasons": [] if ruler2 else ["raw_result_answer"]}}


def test_ruler_change_counts_and_lists_what_ruler_2_removes_and_adds():
    judged = [_judged("t0", "sel_fx", True, True), _judged("t1", "sel_fx", True, False),
              _judged("t2", "sel_weather", True, False), _judged("t3", "sel_weather", False, True),
              _judged("t4", "sel_fx", False, False)]
    change = ruler_change(judged)
    assert (change["accepted_ruler1"], change["accepted_ruler2"]) == (3, 2)
    assert [r["task_id"] for r in change["removed"]] == ["t1", "t2"] and change["removed"][0]["ruler2_reasons"] == [
        "raw_result_answer"]
    assert [r["task_id"] for r in change["added"]] == ["t3"]
    assert change["removed_by_template"] == {"sel_fx": 1, "sel_weather": 1}
    assert change["added_by_template"] == {"sel_weather": 1}


def test_judged_rows_carry_both_rulers_and_accept_by_the_named_ruler():
    clean = replay_record(TASK, texts(ACTS))
    row = judged_row(TASK, {"task_id": TASK["id"], "pass": 1, "family": "f", "template": "t", "record": clean}, RULER2)
    assert row["verdict"]["ruler"] == RULER1 and row[RULER2]["ruler"] == RULER2 and row["ruler"] == RULER2
    assert row["accepted"] and row["accepted_ruler1"] and row["accepted_ruler2"] and row["accepted_writeup"]
    # the oracle's facts pasted back as the tool's raw JSON: ruler 1 passes it, ruler 2 does not
    raw = {**clean, "final": json.dumps(clean["calls"][-1]["observation"]["result"])}
    row = {"task_id": TASK["id"], "pass": 1, "family": "f", "template": "t", "record": raw}
    by2, by1 = judged_row(TASK, row, RULER2), judged_row(TASK, row, RULER1)
    assert by2["accepted_ruler1"] and not by2["accepted_ruler2"] and not by2["accepted"]
    assert by2["rejection_reasons"] == ["not_success"] and "raw_result_answer" in by2[RULER2]["reasons"]
    # study 1's acceptance (ruler 1) accepts it, records its ruler, and still carries ruler 2's verdict
    assert by1["accepted"] and by1["ruler"] == RULER1 and by1["rejection_reasons"] == []
    assert {k: v for k, v in by1.items() if k not in ("accepted", "ruler", "rejection_reasons")} == \
        {k: v for k, v in by2.items() if k not in ("accepted", "ruler", "rejection_reasons")}


def test_the_acceptance_ruler_must_be_a_ruler():
    assert AcceptanceConfig("ruler1").ruler == RULER1
    with pytest.raises(AcceptanceError, match="accept_teacher.ruler: 'ruler3' is not a ruler; valid: ruler1, ruler2"):
        AcceptanceConfig("ruler3")


# ------------------------------------------------------------ resumable passes
class Interrupt(Exception):
    pass


class StopAfter:
    """Oracle policy that raises after ``n`` batched turns (a kill mid-chunk)."""

    def __init__(self, n: int):
        self.n, self.inner = n, OraclePolicy()

    def memory(self):
        return self.inner.memory()

    def act_batch(self, eps, memories):
        self.n -= 1
        if self.n < 0:
            raise Interrupt
        return self.inner.act_batch(eps, memories)


def train_task(template: str, seed: int) -> dict:
    return {**generate_task(template, seed, "train"), "dataset": "train_pool"}


def test_pass_resumes_from_last_finished_chunk(tmp_path):
    tasks = [train_task(t, s) for t in ("sel_weather", "ch_deep3", "par_fx") for s in range(3)]
    cfg = DistillConfig(chunk=4, batch_size=2)
    full = run_pass(tasks, OraclePolicy(), ChunkLog(tmp_path / "a.partial.jsonl", {"x": 1}), cfg, 1)
    log_path = tmp_path / "b.partial.jsonl"
    with pytest.raises(Interrupt):
        run_pass(tasks, StopAfter(7), ChunkLog(log_path, {"x": 1}), cfg, 1)
    done = ChunkLog(log_path, {"x": 1}).chunks
    assert 0 < len(done) < len(chunked(tasks, 4))  # some, not all, chunks survived the kill
    resumed = run_pass(tasks, OraclePolicy(), ChunkLog(log_path, {"x": 1}), cfg, 1)
    assert [json.dumps(r, sort_keys=True) for r in resumed] == [json.dumps(r, sort_keys=True) for r in full]
    assert [r["task_id"] for r in full] == [t["id"] for t in tasks]
    assert all(r["pass"] == 1 and "verdict" not in r for r in full)  # transcripts; acceptance is judged apart
    assert all(r["accepted"] for r in judge_pass({t["id"]: t for t in tasks}, full, "test", RULER2))


def test_pass2_takes_rejected_tasks_in_pool_order_up_to_the_cap():
    offered = [{"id": f"t{i}"} for i in range(6)]
    # rows in any order; pass 2 resamples what ruler 1 rejected (the generation ran before ruler 2)
    pass1 = [{"task_id": f"t{i}", "accepted_ruler1": i in (1, 4), "accepted": i == 4} for i in (5, 4, 3, 2, 1, 0)]
    assert [t["id"] for t in pass2_tasks(offered, pass1, DistillConfig())] == ["t0", "t2", "t3", "t5"]
    assert [t["id"] for t in pass2_tasks(offered, pass1, DistillConfig(pass2_max=2))] == ["t0", "t2"]
    assert pass2_tasks(offered, pass1, DistillConfig(pass2_max=0)) == []


def test_chunk_log_ignores_torn_line_and_other_fingerprints(tmp_path):
    path = tmp_path / "p.partial.jsonl"
    log = ChunkLog(path, {"cfg": 1})
    log.append(0, {"rows": [1]})
    log.append(1, {"rows": [2]})
    with open(path, "a") as f:
        f.write('{"chunk": 2, "payl')  # killed mid-write
    again = ChunkLog(path, {"cfg": 1})
    assert sorted(again.chunks) == [0, 1] and not again.discarded
    again.append(2, {"rows": [3]})
    assert sorted(ChunkLog(path, {"cfg": 1}).chunks) == [0, 1, 2]
    other = ChunkLog(path, {"cfg": 2})
    assert other.discarded and other.chunks == {}


def test_a_resume_log_edited_into_well_formed_json_is_discarded(tmp_path):
    path = tmp_path / "e.partial.jsonl"
    log = ChunkLog(path, {"cfg": 1})
    log.append("t0", {"row": {"final": "right", "status": "done"}})
    log.append("t1", {"row": {"final": "right", "status": "done"}})
    assert sorted(ChunkLog(path, {"cfg": 1}).chunks) == ["t0", "t1"]
    path.write_text(path.read_text().replace('"right","status":"done"}},"sha256"', '"wrong","status":"done"}},"sha256"', 1))
    edited = ChunkLog(path, {"cfg": 1})
    assert edited.discarded and edited.chunks == {}  # redone, never reused


def test_temporary_files_left_by_a_killed_writer_are_removed(tmp_path):
    """A writer's temporary name carries its pid: a dead writer's leftover goes, a live writer's stays."""
    import os
    import subprocess as sp

    from ccl.artifacts.jsonio import write_json
    dead = sp.Popen(["true"])
    dead.wait()  # a pid that is certainly gone (reaped)
    (tmp_path / f".summary.json.{dead.pid}.abc123.tmp").write_text("half")
    (tmp_path / f".summary.json.{os.getppid()}.def456.tmp").write_text("a live writer's")
    (tmp_path / f".other.json.{dead.pid}.abc123.tmp").write_text("another file's")
    write_json(tmp_path / "summary.json", {"a": 1})
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [f".other.json.{dead.pid}.abc123.tmp", f".summary.json.{os.getppid()}.def456.tmp", "summary.json"])


def test_a_killed_conversion_is_cleaned_and_a_running_one_is_not(tmp_path):
    import os
    import subprocess as sp

    from ccl.artifacts.jsonio import orphans
    dead = sp.Popen(["true"])
    dead.wait()
    (tmp_path / f".qwen.{dead.pid}.x1").mkdir()
    (tmp_path / f".qwen.{os.getppid()}.x2").mkdir()
    (tmp_path / ".qwen.lock").touch()
    (tmp_path / f".qwen2.{dead.pid}.x3").mkdir()
    assert [p.name for p in orphans(tmp_path, "qwen")] == [f".qwen.{dead.pid}.x1"]


# ------------------------------------------------------------ the distill script on the smoke profile
def run_script(*args, **kw):
    return subprocess.Popen([sys.executable, *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, **kw)


@pytest.mark.slow  # about half a minute or more on 2 cores: CI runs it (.ci/run), the default suite does not
def test_distill_killed_and_rerun_gives_byte_identical_files(smoke_data, smoke_distilled, tmp_path):
    base = ["-m", "scripts.distill", "--profile", "smoke", "--data", str(smoke_data.parent)]
    straight = smoke_distilled / "teacher"  # the same stage run straight through
    killed = tmp_path / "killed"
    p = run_script(*base, "--out", str(killed))
    partial = killed / "pass1.partial.jsonl"
    deadline = time.time() + 600
    while time.time() < deadline and p.poll() is None:  # kill once the first chunk is logged
        if partial.exists() and len(partial.read_text().splitlines()) >= 2:
            p.send_signal(signal.SIGKILL)
            break
        time.sleep(0.2)
    p.wait()
    assert p.returncode == -signal.SIGKILL, "the run finished before it could be killed"
    assert not (killed / "pass1.jsonl.gz").exists()
    p = run_script(*base, "--out", str(killed))
    out, _ = p.communicate()
    assert p.returncode == 0, out
    assert sha256_file(killed / "pass1.jsonl.gz") == sha256_file(straight / "pass1.jsonl.gz")
    assert not list(killed.glob("*.partial.jsonl"))


def test_teacher_stages_split_generation_from_acceptance(smoke_distilled):
    teacher = smoke_distilled / "teacher"
    pass1 = list(read_jsonl(teacher / "pass1.jsonl.gz"))
    pass2 = list(read_jsonl(teacher / "pass2.jsonl.gz"))
    judged = list(read_jsonl(teacher / "acceptance.jsonl"))
    s = read_json(teacher / "summary.json")
    assert s["tasks_offered"] == len(pass1) == 8
    assert all("verdict" not in r for r in pass1 + pass2)  # transcripts only
    # pass 2 reruns exactly the tasks pass 1 rejected, and the counts in the summary match the files
    rejected = [r["task_id"] for r in judged if r["pass"] == 1 and not r["accepted_ruler1"]]
    assert [r["task_id"] for r in pass2] == rejected
    assert s["passes"]["pass1"]["accepted"] == sum(r["accepted"] for r in judged if r["pass"] == 1)
    assert s["passes"]["pass2"]["episodes"] == len(pass2)
    assert s["passes"]["pass1"]["gen_tokens"] == sum(r["new_tokens"] for r in pass1) > 0
    assert s["accepted_tasks_writeup"] >= s["accepted_episodes"]  # strict acceptance only removes
    change = s["ruler_change"]
    # params.yaml names ruler 1 for every profile of study 1: acceptance, summary and manifest say so
    assert s["ruler"] == read_json(teacher / "manifest.json")["ruler"] == RULER1
    assert all(r["ruler"] == RULER1 for r in judged)
    assert change["accepted_ruler1"] == s["accepted_episodes"] == sum(r["accepted"] for r in judged)
    assert change["accepted_ruler2"] == sum(r["accepted_ruler2"] for r in judged)
    assert change["accepted_ruler1"] - len(change["removed"]) + len(change["added"]) == change["accepted_ruler2"]
    assert set(read_json(teacher / "manifest.json")["files"]) == {
        "pass1.jsonl.gz", "pass1.json", "pass2.jsonl.gz", "pass2.json", "acceptance.jsonl", "summary.json"}


# ------------------------------------------------------------ SFT variants
def fake_teacher_episodes(pool: list[dict]) -> list[dict]:
    """Teacher episodes made by the oracle (accepted) on every other task, rejected elsewhere."""
    rows = []
    for i, task in enumerate(pool):
        policy = OraclePolicy()
        _, ep, _, _ = next(rollout([task], policy, batch_size=1))
        rows.append({**transcript_row(task, ep, None), "pass": 1, "accepted": not i % 2})
    return rows


@pytest.fixture(scope="module")
def variant_inputs():
    pool = [train_task(t, s) for s in range(6) for t in ("sel_weather", "ch_deep2", "rec_fx_timeout",
                                                                      "appr_email_denied")]
    for i, t in enumerate(pool):
        t["id"] = f"train-{i:04d}"
    from ccl.data.sft import sft_row
    oracle = {}
    for t in pool:
        _, ep, _, _ = next(rollout([t], OraclePolicy(), batch_size=1))
        oracle[t["id"]] = sft_row(t, ep.record(), "oracle")
    offered = pool[:16]
    episodes = fake_teacher_episodes(offered)
    return pool, offered, episodes, oracle


def test_variant_sizes_overlap_and_composition(variant_inputs):
    pool, offered, episodes, oracle = variant_inputs
    teacher = teacher_rows({t["id"]: t for t in pool}, episodes)
    assert len(teacher) == 8  # every other offered task was accepted
    v, notes = build_variants(BuildSFTConfig(budget=6, c_full=20, seed=3), pool, [t["id"] for t in offered],
                              teacher, oracle)
    assert {k: len(r) for k, r in v.items()} == {"B": 6, "C": 6, "C_matched": 6, "C_25": 2, "C_50": 3,
                                                 "C_full": 20, "Dmix": 12, "Dseq": 12}
    offered_ids = {t["id"] for t in offered}
    assert {r["source"] for r in v["B"]} == {"teacher"} and {r["source"] for r in v["C"]} == {"oracle"}
    assert [r["task_id"] for r in v["C_matched"]] == [r["task_id"] for r in v["B"]]
    assert {r["task_id"] for r in v["C"]} <= offered_ids and len({r["task_id"] for r in v["C"]}) == 6
    assert v["C_25"] == v["C"][:2] and v["C_50"] == v["C"][:3]
    assert [r["phase"] for r in v["Dseq"]] == [0] * 6 + [1] * 6
    assert notes == {"budget": 6, "b_episodes": 6, "c_episodes": 6, "teacher_accepted": 8}
    d = describe_variant(v["Dmix"])
    assert d["episodes"] == 12 and d["sources"] == {"oracle": 6, "teacher": 6}
    assert sum(d["families"].values()) == 12
    assert d["sft_rows"] == sum(m["role"] == "assistant" for r in v["Dmix"] for m in r["messages"])


def test_a_teacher_shortfall_shrinks_b_not_c_and_is_recorded(variant_inputs):
    pool, offered, episodes, oracle = variant_inputs
    teacher = teacher_rows({t["id"]: t for t in pool}, episodes)
    v, notes = build_variants(BuildSFTConfig(budget=12), pool, [t["id"] for t in offered], teacher, oracle)
    assert len(v["B"]) == len(v["C_matched"]) == 8  # all accepted episodes
    assert len(v["C"]) == 12 and len(v["C_25"]) == 3 and len(v["C_50"]) == 6 and len(v["C_full"]) == len(pool)
    assert len(v["Dmix"]) == 20 and notes["b_episodes"] == 8 and "shortfall" in notes
    v, notes = build_variants(BuildSFTConfig(budget=12), pool, [t["id"] for t in offered], [], oracle)
    assert v["B"] == [] and v["C_matched"] == [] and len(v["C"]) == 12  # a teacher that solved nothing


def test_teacher_and_oracle_turns_share_one_surface_form(variant_inputs):
    pool, offered, episodes, oracle = variant_inputs
    teacher = teacher_rows({t["id"]: t for t in pool}, episodes)
    for row in teacher:
        same = oracle[row["task_id"]]
        assert row["messages"] == same["messages"]  # same decisions -> identical text, only the source differs


def make_data_dir(root: Path, variant_inputs) -> Path:
    pool, offered, episodes, oracle = variant_inputs
    data = root / "data"
    write_jsonl(data / "tasks" / "train_pool.jsonl", pool)
    write_jsonl(data / "sft" / "oracle_train.jsonl", [oracle[t["id"]] for t in pool])
    teacher = data / "teacher"
    write_jsonl(teacher / "pass1.jsonl.gz", [{k: v for k, v in r.items() if k != "accepted"} for r in episodes])
    write_jsonl(teacher / "pass2.jsonl.gz", [])
    write_jsonl(teacher / "acceptance.jsonl", [{"task_id": r["task_id"], "pass": 1, "accepted": r["accepted"]}
                                                for r in episodes])
    from ccl.artifacts.manifest import write_manifest
    write_manifest(teacher, [teacher / n for n in ("pass1.jsonl.gz", "pass2.jsonl.gz", "acceptance.jsonl")])
    return data


def build_sft(data: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "scripts.build_sft", "--profile", "smoke", "--data", str(data),
                           "--out", str(out)], cwd=ROOT, capture_output=True, text=True)


def test_build_sft_is_deterministic_and_lists_composition(tmp_path, variant_inputs):
    data = make_data_dir(tmp_path, variant_inputs)
    a, b = build_sft(data, tmp_path / "a"), build_sft(data, tmp_path / "b")
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    va, vb = read_json(tmp_path / "a" / "variants.json"), read_json(tmp_path / "b" / "variants.json")
    assert va == vb
    for name, entry in va["variants"].items():
        path = tmp_path / "a" / entry["file"]
        assert entry["sha256"] == sha256_file(path) == sha256_file(tmp_path / "b" / entry["file"])
        rows = list(read_jsonl(path))
        fam: dict[str, int] = {}
        for r in rows:
            fam[r["family"]] = fam.get(r["family"], 0) + 1
        assert entry["families"] == dict(sorted(fam.items())) and entry["episodes"] == len(rows)
        assert entry["sft_rows"] == sum(r["n_assistant_turns"] for r in rows)


def test_build_sft_names_missing_and_corrupt_teacher_files(tmp_path, variant_inputs):
    data = make_data_dir(tmp_path, variant_inputs)
    pass2 = data / "teacher" / "pass2.jsonl.gz"
    pass2.write_bytes(gzip.compress(b'{"task_id": "x"}\n'))  # parses, but is not what distill wrote
    r = build_sft(data, tmp_path / "out")
    assert r.returncode == 2 and "pass2.jsonl.gz: corrupt" in r.stderr and "rerun the distill_pass2 stage" in r.stderr
    os.unlink(pass2)
    r = build_sft(data, tmp_path / "out")
    assert r.returncode == 2 and "pass2.jsonl.gz: missing" in r.stderr
    assert not (tmp_path / "out").exists()
