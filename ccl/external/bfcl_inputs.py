"""The BFCL stages' inputs, read through the one reader (``ccl.artifacts.inputs``) and checked beyond
their shapes: the sample (stage bfcl_sample) must come from the installed bfcl-eval and name only its
categories and questions (``bfcl_questions.questions``); a configuration's answers (stage bfcl) must have
been answered under that same release, since a verdict means something only on the questions and the
checker of the release that drew them. Kept apart from ``bfcl_questions`` so that stage bfcl_sample,
which only draws, does not depend on the reader."""
from __future__ import annotations

from pathlib import Path

from ..artifacts.inputs import one_line, read_record, read_rows
from ..artifacts.shapes import BfclAnswer, BfclGeneration, BfclSample
from ..errors import InputError
from ..vocabulary import BASELINES
from .bfcl_questions import Question, questions


def read_sample(path: Path) -> tuple[dict, list[Question]]:
    """The sample as read and its questions with their possible answers, in the sample's order."""
    drawn = read_record(path, "bfcl_sample", BfclSample)
    return drawn, questions(drawn, str(path))


def answering_stage(name: str) -> str:
    """The dvc stage that answers for ``name``: a baseline's ``bfcl@<name>``, a trained run's
    ``bfcl_run@<name>`` (dvc.yaml), so a message names what to rerun."""
    return f"bfcl@{name}" if name in BASELINES else f"bfcl_run@{name}"


def read_answers(folder: Path, name: str, release: str) -> tuple[dict, list[dict]]:
    """One configuration's generation record and answers (at least one), answered under ``release``
    (the sample's, which ``read_sample`` checked is the installed one)."""
    answers_path, gen_path = folder / "answers.jsonl.gz", folder / "generation.json"
    stage = answering_stage(name)
    for path in (answers_path, gen_path):  # both before either is read: the remedy is the same
        if not path.is_file():
            raise InputError(f"{path}: missing; run the {stage} stage first")
    gen = read_record(gen_path, stage, BfclGeneration)
    if gen["bfcl_eval"] != release:
        raise InputError(f"{gen_path}: answered under bfcl-eval {one_line(gen['bfcl_eval'])}, but the sample and the "
                         f"installed checker are bfcl-eval {release}; rerun the {stage} stage")
    return gen, read_rows(answers_path, stage, BfclAnswer, need_rows=True)
