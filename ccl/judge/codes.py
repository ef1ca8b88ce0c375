"""Reason codes of rulers 2 and 3 and the criteria they belong to, and the decomposed reward's weights:
one vocabulary, read by both rulers (moved here unchanged from ``ruler2``, issue 57, so that ruler 3,
which must not import ruler 1's validator, need not import ruler 2 either)."""
from __future__ import annotations

from ..vocabulary import CRITERIA

# Weights of the decomposed reward (they sum to 1; the oracle scores 1 on every task). The answer
# and the outcome weigh most: they are what the user reads, and what the red team attacks.
WEIGHTS = {"format": 0.10, "selection": 0.15, "arguments": 0.15, "dependency_order": 0.10,
           "recovery": 0.10, "outcome": 0.20, "answer": 0.20}
assert tuple(WEIGHTS) == CRITERIA and abs(sum(WEIGHTS.values()) - 1) < 1e-12


# Ruler 1's answer checks that ruler 2 keeps (they are not word lists); the others (outcome phrases,
# claims, hedges, negations, competing values) are replaced by ccl.judge.statements, whose rule
# (account for every word) refuses what their lists missed and passes what they refused.
KEPT_FROM_RULER1 = {"missing_fact": "answer", "fact_not_attributed": "answer", "wrong_currency": "answer",
                    "echoes_request": "outcome"}
# answer reason code (the part before any ':') -> its criterion
ANSWER_CRITERION = {
    **KEPT_FROM_RULER1,
    "raw_result_answer": "answer", "unnamed_currency": "answer", "ignores_request": "outcome",
    "result_key": "answer", "object_syntax": "answer", "observation_framing": "answer", "result_dump": "answer",
    "unsourced_value": "answer", "alternative_values": "answer", "unexplained_word": "answer",
    "question_in_answer": "answer", "foreign_script": "answer", "disguised_letters": "answer",
    "competing_value": "answer", "misattributed_value": "answer", "empty_statement": "answer",
    "overlong_answer": "answer", "malformed_record": "format",
    "outcome_not_stated": "outcome", "outcome_inconsistent": "outcome", "false_action_claim": "outcome",
    "denied_action_done": "outcome",
}
