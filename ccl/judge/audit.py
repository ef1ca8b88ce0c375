"""The transcript audit: checks found by reading strict successes after the pre-registered run.

Strict success (``ccl.judge.validate``) is the study's primary outcome, fixed by
docs/preregistration.md before the run. Reading the run's strict successes afterwards showed
three kinds that state the required facts without answering the user:

- ``raw_result_answer``: the final answer is a JSON object or array, in practice a tool's
  raw result handed back verbatim (the teacher does this, and B learns it from the teacher's
  accepted demonstrations). Every fact of the result is in it, so any fact check passes.
- ``unnamed_currency``: the answer names an ISO currency code that neither the request nor
  any tool call or result of the episode mentions ("1 EUR = 0.0108 GBP" for an INR to GBP
  rate): the number is right, the statement is false. Only explicit codes are checked.
- ``ignores_request``: a task that needs no tool whose request names identifiers (an order
  number, say) gets an answer naming none of them ("You're welcome, have a good day!" to
  "order ORD-14307 is cancelled, just confirm you got my message").

These checks are post hoc: they were written after the results were seen, so they are a
sensitivity analysis beside the pre-registered outcome, never a replacement for it. They live
in ``ccl.judge.audit_checks``, not in ``ccl.judge.validate``, so that adding them re-judges stored transcripts
only: the validator is a dependency of teacher acceptance, whose output would change (and with it
every training set's provenance) if the verdict records changed shape. This module holds the
audit's names and what the analysis reads of a verdict row, and imports nothing, so the
analysis does not depend on the checks' code.
"""
from __future__ import annotations

# The post-hoc outcome's name in the analysis: strict success with no audit reason.
AUDITED = "success_audited"
AUDIT_REASONS = ("raw_result_answer", "unnamed_currency", "ignores_request")
# Per-episode values the analysis reads: the audited outcome, and each reason among strict successes.
AUDIT_METRICS = (AUDITED, *(f"audit_{r}" for r in AUDIT_REASONS))


def audit_values(row: dict) -> dict[str, bool | None]:
    """A verdict row's audited outcome and, per reason, whether it flagged a strict success;
    all None for a row judged before the audit existed."""
    if "audit" not in row:
        return dict.fromkeys(AUDIT_METRICS)
    success = bool(row["verdict"]["success"])
    return {AUDITED: success and not row["audit"],
            **{f"audit_{r}": success and r in row["audit"] for r in AUDIT_REASONS}}
