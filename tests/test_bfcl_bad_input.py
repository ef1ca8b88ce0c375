"""A malformed BFCL input (issue 55) stops stage bfcl_score, and stage bfcl before its model loads, with
one line on stderr that names the file and what is wrong: exit status 2, no traceback, no output written.

Each case is a tmp copy of the committed sample (data/bfcl/sample.json) and the oracle's answers
(results/bfcl/answers/oracle) with one fault put in; the expected lines are written out by hand. The
scripts run as the pipeline runs them (``python -m scripts...``), all cases at once (each run is mostly
the interpreter importing bfcl-eval), so the file takes seconds."""
from __future__ import annotations

import gzip
import json
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path
from typing import Callable

import pytest
from subproc import ROOT, run_py

SAMPLE, ORACLE = ROOT / "data" / "bfcl" / "sample.json", ROOT / "results" / "bfcl" / "answers" / "oracle"
RELEASE = metadata.version("bfcl-eval")  # the copies claim the installed release, so only the fault differs
SENTINEL = b"an earlier table\n"


def sample(d: Path) -> Path:
    return d / "sample.json"


def answers(d: Path) -> Path:
    return d / "answers" / "oracle" / "answers.jsonl.gz"


def generation(d: Path) -> Path:
    return d / "answers" / "oracle" / "generation.json"


def edit_json(path: Path, change: Callable[[dict], None]) -> None:
    record = json.loads(path.read_text())
    change(record)
    path.write_text(json.dumps(record))


def edit_rows(d: Path, change: Callable[[list], None]) -> None:
    rows = [json.loads(line) for line in gzip.decompress(answers(d).read_bytes()).decode().splitlines()]
    change(rows)
    answers(d).write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))


def torn_line(d: Path) -> None:  # the second line cut off after its id, the rest intact
    first, *rest = gzip.decompress(answers(d).read_bytes()).decode().splitlines(keepends=True)
    answers(d).write_bytes(gzip.compress((first + '{"id": "x"\n' + "".join(rest)).encode()))


def truncated_gzip(d: Path) -> None:
    data = answers(d).read_bytes()
    answers(d).write_bytes(data[: len(data) // 2])


def in_sample(change: Callable[[dict], None]) -> Callable[[Path], None]:
    return lambda d: edit_json(sample(d), change)


def in_rows(change: Callable[[list], None]) -> Callable[[Path], None]:
    return lambda d: edit_rows(d, change)


CATS = "simple_python, multiple, parallel, parallel_multiple, irrelevance"
BY_SAMPLE, BY_ORACLE = "; rerun the bfcl_sample stage", "; rerun the bfcl@oracle stage"
SAMPLE_FAULTS: dict[str, tuple[Callable[[Path], None], str]] = {
    "torn": (lambda d: sample(d).write_text('{"bfcl_eval": "2026.3.23", "seed": 0, "categ'),
             "{S}: corrupt (Unterminated string starting at: line 1 column 39 (char 38))" + BY_SAMPLE),
    "a_list": (lambda d: sample(d).write_text("[]"), "{S}: expected a JSON object, got list" + BY_SAMPLE),
    "no_categories_field": (in_sample(lambda s: s.pop("categories")),
                            "{S}: categories: Field required (got nothing; expected a BfclSample)" + BY_SAMPLE),
    "ids_a_string": (in_sample(lambda s: s["categories"]["parallel"].update(ids="parallel_0")),
                     "{S}: categories.parallel.ids: Input should be a valid list (got str; expected a BfclSample)"
                     + BY_SAMPLE),
    "unknown_category": (in_sample(lambda s: s["categories"].update(simple_cobol={"total": 1, "ids": ["x"]})),
                         f"{{S}}: unknown BFCL category 'simple_cobol' (a sample draws from {CATS}); "
                         "rerun stage bfcl_sample"),
    "no_questions": (in_sample(lambda s: s.update(categories={})),
                     "{S}: categories: Dictionary should have at least 1 item after validation, not 0 (got dict; "
                     "expected a BfclSample)" + BY_SAMPLE),
    "a_category_without_ids": (in_sample(lambda s: s["categories"]["parallel"].update(ids=[])),
                               "{S}: categories.parallel.ids: List should have at least 1 item after validation, "
                               "not 0 (got list; expected a BfclSample)" + BY_SAMPLE),
}
ANSWER_FAULTS: dict[str, tuple[Callable[[Path], None], str]] = {
    "truncated_gzip": (truncated_gzip,
                       "{A}: corrupt (Compressed file ended before the end-of-stream marker was reached)" + BY_ORACLE),
    "torn_line": (torn_line, "{A}:2: invalid JSON line (Expecting ',' delimiter)" + BY_ORACLE),
    "no_text_field": (in_rows(lambda rows: rows[2].pop("text")),
                      "{A}: row 3: text: Field required (got nothing; expected a BfclAnswer)" + BY_ORACLE),
    "tokens_a_string": (in_rows(lambda rows: rows[0].update(new_tokens="0")),
                        "{A}: row 1: new_tokens: Input should be a valid integer (got str; expected a BfclAnswer)"
                        + BY_ORACLE),
    "no_rows": (lambda d: answers(d).write_bytes(gzip.compress(b"")),
                "{A}: no rows" + BY_ORACLE + " (this stage needs at least one)"),
    "generation_other_release": (lambda d: edit_json(generation(d), lambda g: g.update(bfcl_eval="1999.1.1")),
                                 "{G}: answered under bfcl-eval 1999.1.1, but the sample and the installed checker "
                                 f"are bfcl-eval {RELEASE}" + BY_ORACLE),
    "generation_cap_a_string": (lambda d: edit_json(generation(d), lambda g: g.update(max_new_tokens="256")),
                                "{G}: max_new_tokens: Input should be a valid integer (got str; expected a "
                                "BfclGeneration)" + BY_ORACLE),
}
# stage bfcl reads only the sample, and must refuse it before its model (A_base's) loads
GENERATION_FAULTS = ("torn", "a_list", "ids_a_string", "unknown_category", "no_questions")
CASES = {**{f"bfcl_score/sample_{k}": ("bfcl_score", *v) for k, v in SAMPLE_FAULTS.items()},
         **{f"bfcl_score/{k}": ("bfcl_score", *v) for k, v in ANSWER_FAULTS.items()},
         **{f"bfcl/sample_{k}": ("bfcl", *SAMPLE_FAULTS[k]) for k in GENERATION_FAULTS},
         "bfcl_score/none": ("bfcl_score", lambda d: None, "")}


def prepared(d: Path, fault: Callable[[Path], None]) -> Path:
    """``d`` holding the good copies (claiming the installed release), an earlier table, then the fault."""
    shutil.copytree(ORACLE, d / "answers" / "oracle")
    shutil.copy(SAMPLE, sample(d))
    for path in (sample(d), generation(d)):
        edit_json(path, lambda r: r.update(bfcl_eval=RELEASE))
    (d / "out").mkdir()
    (d / "out" / "summary.json").write_bytes(SENTINEL)
    fault(d)
    return d


def command(stage: str, d: Path) -> list[str]:
    if stage == "bfcl":
        return ["-m", "scripts.bfcl", "--name", "A_base", "--sample", str(sample(d)), "--out", str(d / "generated")]
    return ["-m", "scripts.bfcl_score", "--names", "oracle", "--sample", str(sample(d)),
            "--answers", str(d / "answers"), "--out", str(d / "out")]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("bfcl_bad")
    dirs = {name: prepared(base / name.replace("/", "-"), fault) for name, (_, fault, _) in CASES.items()}
    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
        done = {name: pool.submit(run_py, *command(CASES[name][0], d), ok=False) for name, d in dirs.items()}
    return {name: (f.result(), dirs[name]) for name, f in done.items()}


@pytest.mark.parametrize("case", [c for c in CASES if not c.endswith("/none")])
def test_a_bad_input_is_one_line_naming_the_file_and_nothing_is_written(runs, case):
    stage, _, expected = CASES[case]
    r, d = runs[case]
    line = expected.format(S=sample(d), A=answers(d), G=generation(d))
    assert r.returncode == 2, r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    assert r.stderr.splitlines() == [f"{stage}: {line}"]
    assert [p.name for p in (d / "out").iterdir()] == ["summary.json"]
    assert (d / "out" / "summary.json").read_bytes() == SENTINEL
    assert not (d / "generated").exists()


def test_the_good_copies_score(runs):
    # the copies the faults go into are themselves good: the oracle scores 100% on them
    r, d = runs["bfcl_score/none"]
    assert r.returncode == 0, r.stderr[-2000:]
    summary = json.loads((d / "out" / "summary.json").read_text())
    assert all(cell["rate"] == 1.0 for cell in summary["configs"]["oracle"]["cells"].values())
