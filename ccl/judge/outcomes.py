"""Call outcomes as the rulers read them: which ones returned an answer, and which were no attempt.
Shared by ruler 1 (``validate``), ruler 2's assignment and ruler 3; moved here unchanged from
``validate`` so that ruler 3 need not import ruler 1's validator (issue 57)."""
from __future__ import annotations

from ..records import CallOutcome

# call outcomes in which the world answered a well-formed request (a result, "no such
# entity", or the user's "no"); a timeout, an outage or a rejected call returned nothing
RETURNED = (CallOutcome.OK, CallOutcome.NOT_FOUND, CallOutcome.APPROVAL_DENIED)
# call outcomes that are not attempts: the runtime refused the call before any check of
# role, approval or world (bad arguments for the schema, or over a call limit); a tool
# rejecting a value (INVALID_ARGUMENT) did receive the call, so that one is an attempt
NOT_ATTEMPTED = (CallOutcome.INVALID_ARGS, CallOutcome.TOO_MANY_CALLS_IN_TURN, CallOutcome.CALL_BUDGET_EXHAUSTED)
# call outcomes counted by the ``invalid_args`` diagnostic: bad arguments either way
BAD_ARGUMENTS = (CallOutcome.INVALID_ARGS, CallOutcome.INVALID_ARGUMENT)
