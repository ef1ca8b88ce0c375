"""The study's vocabulary, defined once: splits, outcomes, diagnostics, training sets, runs,
baselines, configurations and the paired comparisons.

Everything else derives from here: the run a training stage executes (``run``), the run
names params.yaml may list (``RUNS``; ``config.load_params`` refuses others), the evaluate
stage's baselines (dvc.yaml's list is checked against ``BASELINES`` by a test), the
analysis's row order and comparisons, and the report's labels. Dependency-free on purpose:
a stage that needs a name imports it from here and so does not depend (in dvc.yaml) on the
code that produces or judges episodes.

    python -m ccl.vocabulary runs     # the paper profile's runs, for dvc exp run -S 'runs=[...]'
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass

# The held-out evaluation splits pooled in the headline numbers (the write-up's four).
MAIN_SPLITS = ("eval_id", "eval_ood", "eval_unseen", "eval_renamed")

# Per-episode diagnostics of the validator, in the write-up's table order (forbidden_attempts:
# calls to a tool the task's role may not use, whatever their arguments; strict success only).
DIAGNOSTICS = ("tool_selection", "arg_correct", "dependency_safe", "strict_schema", "hallucinated_tools",
               "unnecessary_calls", "invalid_args", "parse_errors", "turns", "parallel_ok",
               "permission_violations", "forbidden_attempts", "denied_retries")

# The precisions a profile may compute in (issue 56): float32, what the published studies used, and
# bfloat16 on the CPU's matrix units (experiments/bf16_cpu). A run of the default records nothing new, so
# a published float32 run keeps its bytes; any other precision is written into its records.
PRECISIONS = ("float32", "bfloat16")
DEFAULT_PRECISION = "float32"


def precision_fields(precision: str) -> dict[str, str]:
    """What a record adds for ``precision``: nothing for the default (a float32 record keeps its bytes)."""
    return {} if precision == DEFAULT_PRECISION else {"precision": precision}

# The two success definitions: ``success`` (strict, the primary outcome) and the write-up's.
OUTCOMES = ("success", "success_writeup")

# The rulers that judge an episode, oldest first. Ruler 1 is the validator the pre-registration
# named (its verdicts are the published results); ruler 2 is the farm-resistant one of issue 37
# (ccl.judge.ruler2); ruler 3 (ccl.judge.ruler3, issue 57) is the one rewards read. Every verdict says its ruler.
RULERS = ("ruler1", "ruler2", "ruler3")
RULER1, RULER2, RULER3 = RULERS
# Ruler 2's criteria, in the order of its decomposed reward vector (ccl.judge.ruler2.WEIGHTS).
CRITERIA = ("format", "selection", "arguments", "dependency_order", "recovery", "outcome", "answer")

# The SFT training sets, in the order ccl.data.variants builds and lists them (variants.json).
VARIANTS = ("B", "C", "C_matched", "C_25", "C_50", "C_full", "Dmix", "Dseq")
B, C, C_MATCHED, C_25, C_50, C_FULL, DMIX, DSEQ = VARIANTS
# The four arms (B teacher, C oracle, D mixed and sequential) and the ablations (C on B's
# tasks, C on a quarter and a half of its episodes, C on the whole training pool).
MAIN_VARIANTS = (B, C, DMIX, DSEQ)
ABLATIONS = (C_MATCHED, C_25, C_50, C_FULL)
SEEDS = (0, 1, 2)  # the write-up trains each arm with three seeds, each ablation with seed 0

# The learning arms (issues 40 and 41): trained on what the student's own episodes produced. C_dagger
# is the last DAgger iteration (ccl.learn.dagger); its earlier iterations train runs of their own,
# ``C_dagger_i<k>`` (the first parts of one shared schedule), which roll out the next iteration and are
# not evaluated. C_err is the error-driven round (ccl.learn.errors), C_dpo DPO on C's own mistakes
# starting from C (ccl.learn.dpo), and C_grpo_<reward> GRPO from C against one of three rewards built on
# ruler 2 (ccl.learn.grpo): the episode's success, its weighted criteria, or each turn's grade.
GRPO_REWARDS = ("sparse", "decomposed", "dense")
GRPO = tuple(f"C_grpo_{r}" for r in GRPO_REWARDS)
C_GRPO_SPARSE, C_GRPO_DECOMPOSED, C_GRPO_DENSE = GRPO
LEARNED = ("C_dagger", "C_err", "C_dpo", *GRPO)
C_DAGGER, C_ERR, C_DPO = LEARNED[:3]
DAGGER_ITERATION = re.compile(r"^C_dagger_i[1-9]\d*$")

# Configurations evaluated without training (the evaluate stage's --name).
BASELINES = ("A_base", "A_fewshot", "teacher", "oracle")
STUDENT_BASE, STUDENT_FEWSHOT, TEACHER, ORACLE = BASELINES

# Every configuration in the write-up's table order.
CONFIG_ORDER = (STUDENT_BASE, STUDENT_FEWSHOT, *MAIN_VARIANTS, *ABLATIONS, *LEARNED, TEACHER, ORACLE)

RUN_NAME = re.compile(r"^(?P<config>.+)_s(?P<seed>\d+)$")


@dataclass(frozen=True)
class Run:
    """One training run: a training set and a seed; its name is ``<variant>_s<seed>``."""

    variant: str
    seed: int

    @property
    def name(self) -> str:
        return f"{self.variant}_s{self.seed}"


# The write-up's run matrix: the arms with every seed, the ablations with seed 0.
WRITEUP_RUNS = tuple(Run(v, s) for v in MAIN_VARIANTS for s in SEEDS) + tuple(Run(v, 0) for v in ABLATIONS)
# Every run a profile may train: the write-up's matrix, plus C_matched with every seed, because a
# primary contrast (B vs C_matched, docs/preregistration.md) needs two seeds on each side.
RUNS = {r.name: r for r in [*WRITEUP_RUNS, *(Run(C_MATCHED, s) for s in SEEDS[1:])]}


@dataclass(frozen=True)
class Contrast:
    """A pre-registered primary contrast: ``a`` against each of ``comparators`` (strict success).

    With one comparator it is the paired test a - b. With several it asks whether ``a`` differs
    from all of them in the same direction (better than the best, or worse than the worst),
    tested as an intersection-union test: each a - b must be rejected with the same sign, so its
    p-value is the largest component p-value when the signs agree and 1 otherwise (no comparator
    is picked by looking at evaluation results).
    """

    name: str
    a: str
    comparators: tuple[str, ...]


# docs/preregistration.md: the three primary contrasts, corrected together (Holm) and pooled
# over the primary splits (the analyze stage's ``primary_splits``).
PRIMARY_CONTRASTS = (
    Contrast("C_vs_A_base", C, (STUDENT_BASE,)),
    Contrast("B_vs_C_matched", B, (C_MATCHED,)),
    Contrast("Dmix_vs_best_single", DMIX, (B, C)),
)

# docs/preregistration-2.md: study 2's primary family, on ruler 2's strict success over fresh tasks of
# its primary splits. Does learning from the student's own episodes beat imitation (DAgger, GRPO against
# the sparse reward, each against C), and does a dense per-turn reward beat the sparse one?
STUDY2_CONTRASTS = (
    Contrast("C_dagger_vs_C", C_DAGGER, (C,)),
    Contrast("C_grpo_sparse_vs_C", C_GRPO_SPARSE, (C,)),
    Contrast("C_grpo_dense_vs_C_grpo_sparse", C_GRPO_DENSE, (C_GRPO_SPARSE,)),
)
# Each study's primary family by name (params ``power.family``, ``study2_analyze``).
PRIMARY_FAMILIES = {"study1": PRIMARY_CONTRASTS, "study2": STUDY2_CONTRASTS}


def run(name: str) -> Run:
    """The run called ``name``; a ValueError listing the valid names otherwise."""
    if name not in RUNS:
        raise ValueError(f"unknown run {name!r}; valid runs: {', '.join(RUNS)}")
    return RUNS[name]


def learned_run(name: str) -> Run:
    """A run of a learning arm (``C_dagger_s0``, ``C_err_s0``, ``C_dagger_i1_s0``); a ValueError otherwise."""
    config, seed = parse_run_name(name)
    if seed is None or not (config in LEARNED or DAGGER_ITERATION.match(config)):
        raise ValueError(f"unknown learned run {name!r}; valid: <arm>_s<seed> with arm one of "
                         f"{', '.join(LEARNED)} or C_dagger_i<k>")
    return Run(config, seed)


def training_run(name: str) -> Run:
    """A run any training stage may train: the SFT matrix's (``RUNS``) or a learning arm's."""
    if name in RUNS:
        return RUNS[name]
    try:
        return learned_run(name)
    except ValueError:
        raise ValueError(f"unknown run {name!r}; valid runs: {', '.join(RUNS)}, or a learning arm's "
                         f"(<arm>_s<seed>, arm one of {', '.join(LEARNED)} or C_dagger_i<k>)") from None


def parse_run_name(name: str) -> tuple[str, int | None]:
    """``B_s2`` -> ("B", 2); ``A_base`` -> ("A_base", None)."""
    m = RUN_NAME.match(name)
    return (m["config"], int(m["seed"])) if m else (name, None)


def _comparisons() -> tuple[tuple[str, str], ...]:
    """The write-up's 21 paired comparisons (a, b), in its order: a - b."""
    vs_base = [(x, STUDENT_BASE) for x in (STUDENT_FEWSHOT, *MAIN_VARIANTS, *ABLATIONS, TEACHER, ORACLE)]
    vs_fewshot = [(x, STUDENT_FEWSHOT) for x in MAIN_VARIANTS]
    direct = [(C, B), (DMIX, B), (DMIX, C), (DSEQ, DMIX), (C_MATCHED, C), (C_MATCHED, B)]
    return tuple(vs_base + vs_fewshot + direct)


COMPARISONS = _comparisons()
# The learning arms' exploratory comparisons (issues 40, 41), a family of their own (Holm within it), so the
# write-up's family and its published p-values never change when a learning arm is evaluated.
LEARNED_COMPARISONS = tuple((arm, C) for arm in LEARNED) + tuple((arm, STUDENT_BASE) for arm in LEARNED)


if __name__ == "__main__":
    if sys.argv[1:] != ["runs"]:
        sys.exit("usage: python -m ccl.vocabulary runs")
    print("[" + ",".join(RUNS) + "]")  # the write-up's matrix and C_matched's other seeds (primary contrast)
