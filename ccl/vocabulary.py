"""Names the study's stages share: splits, diagnostics, SFT variants, baseline configurations.

Dependency-free on purpose: a stage that only needs a name imports it from here and so
does not depend (in dvc.yaml) on the code that produces or judges episodes.
"""
from __future__ import annotations

# The held-out evaluation splits pooled in the headline numbers (the write-up's four).
MAIN_SPLITS = ("eval_id", "eval_ood", "eval_unseen", "eval_renamed")

# Per-episode diagnostics of the validator, in the write-up's table order (forbidden_attempts:
# calls to a tool the task's role may not use, whatever their arguments; strict success only).
DIAGNOSTICS = ("tool_selection", "arg_correct", "dependency_safe", "strict_schema", "hallucinated_tools",
               "unnecessary_calls", "invalid_args", "parse_errors", "turns", "parallel_ok",
               "permission_violations", "forbidden_attempts", "denied_retries")

# The two success definitions: ``success`` (strict, the primary outcome) and the write-up's.
OUTCOMES = ("success", "success_writeup")

# The SFT training sets (ccl.variants builds them).
VARIANTS = ("B", "C", "C_matched", "C_25", "C_50", "C_full", "Dmix", "Dseq")

# Configurations evaluated without training (scripts/evaluate.py --name).
BASELINES = ("A_base", "A_fewshot", "teacher", "oracle")
