"""The executable validator: two success definitions and per-episode diagnostics, no model judge.

``success_writeup`` is the reference write-up's definition (its section 2.3): a final
answer, the expected status, every required fact in the answer, every required gold call
attempted with matching arguments, executed side effects matching the expected ones one
to one, no permission violation, no retry of a declined action. Its reasons are
``reasons``.

``success`` is the strict definition, the study's primary outcome: the write-up's
conditions plus the checks in ``strict_reasons`` (see :func:`strict_reasons` and
docs/architecture.md), which refuse episodes where the work was not actually done.

Facts are matched the same way under both definitions: numbers as values and text as
whole words (``ccl.judge.answers``), which fixes substring matches under any reading.
Nothing an episode record holds can make :func:`validate` raise.
"""
from __future__ import annotations

import json
import re
from typing import Iterable

from ..records import Approval, CallOutcome, Diagnostics, EpisodeRecord, Status, Task, Verdict
from ..world.tools import TOOLS
from .answers import (
    attributed,
    doubts_elsewhere,
    expand_negations,
    fact_decimals,
    fact_present,
    fact_spans,
    fact_value,
    hedged_any,
    negated,
    negation_ending_at,
    norm,
    number_matches,
    numbers,
    text_spans,
    value_spans,
)
from .linear import AddressIndex, leftmost_spans, occurs_whole, run_pattern, run_start
from .matching import args_match
from .task_facts import ID_RE, currency_codes, task_facts

# call outcomes in which the world answered a well-formed request (a result, "no such
# entity", or the user's "no"); a timeout, an outage or a rejected call returned nothing
RETURNED = (CallOutcome.OK, CallOutcome.NOT_FOUND, CallOutcome.APPROVAL_DENIED)
# call outcomes that are not attempts: the runtime refused the call before any check of
# role, approval or world (bad arguments for the schema, or over a call limit); a tool
# rejecting a value (INVALID_ARGUMENT) did receive the call, so that one is an attempt
NOT_ATTEMPTED = (CallOutcome.INVALID_ARGS, CallOutcome.TOO_MANY_CALLS_IN_TURN, CallOutcome.CALL_BUDGET_EXHAUSTED)
# call outcomes counted by the ``invalid_args`` diagnostic: bad arguments either way
BAD_ARGUMENTS = (CallOutcome.INVALID_ARGS, CallOutcome.INVALID_ARGUMENT)

# identifiers and e-mail addresses: what ``ID_RE.pattern + r"|[\w.+-]+@[\w-]+\.[\w.]+"`` finds, found in
# linear time (issue 55: that pattern rescanned a long run of word characters from each of its positions)
_IDENTIFIER = run_pattern(ID_RE.pattern, r"[\w.+-]", r"@[\w-]++\.[\w.]++")


def _attempts(record: EpisodeRecord) -> list[dict]:
    """Calls that named an offered tool with schema-valid arguments (executed or not)."""
    return [c for c in record["calls"] if c["canonical"] is not None and c["outcome"] not in NOT_ATTEMPTED]


def _node_hits(node: dict, calls: list[dict]) -> list[dict]:
    return [c for c in calls if c["canonical"] == node["tool"] and args_match(node["args"], c["cargs"])]


def _match_one_to_one(expected: list[dict], executed: list[dict]) -> bool:
    if len(expected) != len(executed):
        return False

    def search(i: int, used: frozenset) -> bool:
        if i == len(expected):
            return True
        return any(j not in used and e["tool"] == expected[i]["tool"]
                   and args_match(expected[i]["args"], e["args"]) and search(i + 1, used | {j})
                   for j, e in enumerate(executed))

    return search(0, frozenset())


def _dependency_safe(task: dict, record: dict) -> bool:
    """No call used an identifier (ID, email) before it appeared in the request or a result,
    and no call matching a gold step was issued before one of that step's prerequisites
    (or a declared fallback of it) had returned, in an earlier turn (the write-up: "no
    dependent call was issued before its prerequisite returned")."""
    return _ids_observed_first(task, record) and _gold_order_respected(task, record)


def _gold_order_respected(task: dict, record: dict) -> bool:
    nodes = [n for n in task["gold"]["nodes"] if not n["forbidden"]]
    stand_ins = {n["id"]: [n] + [f for f in nodes if f["fallback_for"] == n["id"]] for n in nodes}
    first_turn: dict[str, int] = {}  # node id -> earliest turn with a matching call that returned
    for c in _attempts(record):
        for n in nodes:
            if c["outcome"] in RETURNED and c["canonical"] == n["tool"] and args_match(n["args"], c["cargs"]):
                first_turn[n["id"]] = min(first_turn.get(n["id"], c["turn"]), c["turn"])
    for c in _attempts(record):
        for n in nodes:
            if n["deps"] and c["canonical"] == n["tool"] and args_match(n["args"], c["cargs"]):
                for d in n["deps"]:
                    earliest = min((first_turn[s["id"]] for s in stand_ins.get(d, []) if s["id"] in first_turn),
                                   default=None)
                    if earliest is None or earliest >= c["turn"]:
                        return False
    return True


def _ids_observed_first(task: dict, record: dict) -> bool:
    shown = _Shown(task["request"])
    for turn in record["turns"]:
        for ci in turn["calls"]:
            c = record["calls"][ci]
            if c["canonical"] is None:
                continue
            text = json.dumps(c["args"], ensure_ascii=False)
            if not all(shown.has(text[a:b]) for a, b in leftmost_spans(text, _IDENTIFIER)):
                return False
        shown.add("".join(json.dumps(record["calls"][ci].get("observation", {}), ensure_ascii=False)
                          for ci in turn["calls"]))
    return True


_TOKEN_CHAR, _TOKEN_RUN = re.compile(r"[\w-]"), re.compile(r"[\w-]+")


class _Shown:
    """The text an episode has shown so far, asked whether it holds an identifier as a whole token (no
    word character or hyphen on either side: having seen ORD-12345 does not make ORD-1234 seen).

    A search of the whole text per identifier cost the identifiers times the text (issue 55). An
    identifier of word characters and hyphens only is whole exactly when it is one of the text's maximal
    runs of them, kept in a set. The first ``FINDS`` e-mail addresses asked of a text are searched for
    (``occurs_whole``, at ``str.find``'s pace); past them the text's ``AddressIndex`` is built, which
    answers each in time linear in the address: at most ``FINDS`` searches and one build per text."""

    FINDS = 8

    def __init__(self, text: str) -> None:
        self.text, self.runs, self.found, self.addresses, self.searched = "", set(), set(), None, 0
        self.add(text)

    def add(self, text: str) -> None:
        if self.text and text and _TOKEN_CHAR.match(self.text, len(self.text) - 1) and _TOKEN_CHAR.match(text):
            text, self.text, self.runs = self.text + text, "", set()  # the last run goes on: index anew
        self.runs |= set(_TOKEN_RUN.findall(text))
        self.text += text
        self.found, self.addresses, self.searched = set(), None, 0  # (text added may end a token found at the end)

    def has(self, ident: str) -> bool:
        if _TOKEN_RUN.fullmatch(ident):
            return ident in self.runs
        if ident not in self.found and self._whole(ident):
            self.found.add(ident)
        return ident in self.found

    def _whole(self, ident: str) -> bool:
        if self.addresses is None and self.searched < self.FINDS:
            self.searched += 1
            return occurs_whole(self.text, ident, r"[\w-]", r"[\w-]")
        if self.addresses is None:
            self.addresses = AddressIndex(self.text)
        return self.addresses.has(ident)


def _unnecessary(nodes: list[dict], attempts: list[dict]) -> int:
    """Calls a correct agent would not make: tools outside the gold graph, or repeats of a
    gold call that had already succeeded (retries after an error are necessary)."""
    gold_tools = {n["tool"] for n in nodes if not n["forbidden"]}
    satisfied: set[str] = set()
    count = 0
    for c in attempts:
        if c["outcome"] in (CallOutcome.PERMISSION_DENIED, CallOutcome.DENIED_RETRY):
            continue  # scored as violations, not as waste
        if c["canonical"] not in gold_tools:
            count += 1
            continue
        hit = next((n for n in nodes if not n["forbidden"] and n["tool"] == c["canonical"]
                    and args_match(n["args"], c["cargs"])), None)
        if hit is not None and hit["id"] in satisfied:
            count += 1
        elif hit is not None and c["outcome"] == CallOutcome.OK:
            satisfied.add(hit["id"])
    return count


def _parallel_ok(nodes: list[dict], attempts: list[dict]) -> bool | None:
    groups: dict[str, list[dict]] = {}
    for n in nodes:
        if n["group"]:
            groups.setdefault(n["group"], []).append(n)
    if not groups:
        return None
    for members in groups.values():
        turns = [{c["turn"] for c in _node_hits(n, attempts)} for n in members]
        if not set.intersection(*turns):
            return False
    return True



# ---------------------------------------------------------------- strict checks
# How a failed, blocked or refused outcome may be stated, matched against the answer with
# contractions spelled out (can't -> can not, isn't -> is not); docs/architecture.md lists them.
OUTCOME_PHRASES = {
    Status.FAILED: r"(?:could|can|did|do|does|was|were|am|is|are) not (?:be )?(?:find|found|locate|located|see)"
              r"|unable to (?:find|locate)|not able to (?:find|locate)|not (?:be )?found"
              r"|\bno (?:such |matching )?(?:order|contact|record|entry|file|result|one)s?\b|there(?:'s| is) no\b"
              r"|(?:does|do|did) not exist|no record|(?:is|are|was) not (?:in|listed in|on)\b"
              r"|not in (?:the|your) (?:address book|contacts|records|system)",
    Status.BLOCKED: r"\bdeclin|\bden(?:y|ied)\b|not (?:been )?approv|did not approv|without (?:your )?approval"
               r"|not (?:been )?(?:sent|booked)|did not (?:send|book)|\bblocked\b|(?:chose|choose|decided) not to"
               r"|not (?:go|gone) ahead",
    Status.REFUSED: r"can not|not (?:allowed|permitted|authori[sz]ed|able to)|unable to|permission"
               r"|do not have (?:the )?(?:access|rights|role)|\brole\b|refus|forbidden|only (?:an? )?admin",
}
# Phrases by which a done task's answer reports failure instead ("No order ORD-1 was found.").
CONTRADICTIONS = (r"(?:could|can|did) not find|unable to (?:find|locate)|not (?:be )?found"
                  r"|\bno (?:such |matching )?(?:order|contact|record|file)s?\b|(?:does|do|did) not exist"
                  r"|was not (?:sent|booked)|\b(?:declined|denied)\b")
# Wording that claims a consequential action happened (unless negated just before it).
CLAIMS = {
    "send_email": r"\b(?:sent|emailed|went out|on its way)\b",
    "book_flight": r"\b(?:booked|reserved)\b|booking (?:is |was |has been )?confirmed|is confirmed",
    "delete_file": r"\b(?:deleted|removed|erased)\b",
    "issue_refund": r"\brefunded\b|refund (?:has been |was |is )?(?:issued|processed|done)",
}
_CURRENCY_AFTER_RE = re.compile(r"[ \t]*([^\W\d]+(?:[ \t]+[^\W\d]+)?|[$€£¥₹₩]|zł)")
_CURRENCY_BEFORE_RE = re.compile(r"(?:^|(?<=[\s(]))((?:[^\W\d]+[ \t]+)?[^\W\d]*\$?|[€£¥₹₩])[ \t:]*$")
_SPACE_OR_COLON, _SPACE_OR_TAB, _LETTER = re.compile(r"[ \t:]"), re.compile(r"[ \t]"), re.compile(r"[^\W\d]")


def _consequential(tool: str | None) -> bool:
    spec = TOOLS.get(tool) if isinstance(tool, str) else None
    return bool(spec and (spec.approval or spec.side_effect))


def _forbidden_attempts(task: dict, record: dict) -> int:
    """Calls to a tool the task's role may not use, whatever happened to them (a call with
    bad arguments is rejected by the schema before the role check, yet it was attempted)."""
    return sum(1 for c in record["calls"] if isinstance(c.get("canonical"), str) and c["canonical"] in TOOLS
               and TOOLS[c["canonical"]].roles and task["role"] not in TOOLS[c["canonical"]].roles)


def _answered(node: dict, calls: list[dict]) -> bool:
    return any(c["outcome"] in RETURNED for c in _node_hits(node, calls))


def _unanswered_gold(nodes: list[dict], attempts: list[dict]) -> list[str]:
    """Required gold calls with no matching call that returned, and no declared fallback that did."""
    out = []
    for n in nodes:
        if not n["required"] or n["forbidden"] or _answered(n, attempts):
            continue
        fallbacks = [f for f in nodes if f["fallback_for"] == n["id"]]
        if not any(_answered(f, attempts) for f in fallbacks):
            out.append(n["id"])
    return out


def _echoes(answer: str, request: str) -> bool:
    """The answer is empty, repeats the whole request, adds fewer than three words to it, or
    is a contiguous run of at least half of the request's words."""
    a = re.findall(r"\w+", norm(answer))
    r = re.findall(r"\w+", norm(request))
    if not a:
        return True
    joined_a, joined_r = f" {' '.join(a)} ", f" {' '.join(r)} "
    if joined_a in joined_r:
        return 2 * len(a) >= len(r)
    return joined_r in joined_a and len(a) - len(r) < 3


def _currencies_near(span: tuple[int, int], answer: str) -> set[str]:
    """Currency codes named right after or right before a number (two words, a code, a symbol)."""
    text = norm(answer)
    found: set[str] = set()
    if m := _CURRENCY_AFTER_RE.match(text, span[1]):
        words = m.group(1).split()
        found |= currency_codes(" ".join(words)) or currency_codes(words[0])
    if m := _CURRENCY_BEFORE_RE.search(text, _currency_window(text, span[0]), span[0]):
        words = m.group(1).split()
        found |= currency_codes(" ".join(words)) or currency_codes(words[-1]) if words else set()
    return found


def _currency_window(text: str, end: int) -> int:
    """Where a match of ``_CURRENCY_BEFORE_RE`` in ``text[:end]`` can start (searching all of it once per
    number was quadratic, issue 55): it is, read backwards from its end, spaces or colons, a dollar sign,
    letters, spaces, letters (each maybe empty), or a currency symbol (one character more); it ends at
    ``end``, or before a line break there (``$`` matches before a final line break)."""
    ends = (end, end - 1) if end and text[end - 1] == "\n" else (end,)
    return min(_words_before(text, e) for e in ends)


def _words_before(text: str, end: int) -> int:
    start = run_start(text, end, _SPACE_OR_COLON)
    if start and text[start - 1] == "$":
        start -= 1
    for run in (_LETTER, _SPACE_OR_TAB, _LETTER):
        start = run_start(text, start, run)
    return max(0, start - 1)


def _other_numbers(task: dict, answer: str) -> list[tuple[int, int]]:
    """Spans of the numbers in the answer that are neither in the request nor a required fact."""
    request = {round(n.value, 6) for n in numbers(norm(task["request"]))}
    values = [v for v in (fact_value(x) for x in task["required_facts"]) if v is not None]
    return [(n.start, n.end) for n in numbers(norm(answer)) if round(n.value, 6) not in request
            and not any(number_matches(n, v, fact_decimals(v)) for v in values)]


def _fact_reasons(task: dict, answer: str) -> list[str]:
    """Competing values, hedges, negations, misattributed parallel values, wrong currencies."""
    reasons: set[str] = set()
    facts = task_facts(task)
    spans_of = [fact_spans(f.spellings, answer) for f in facts]
    all_spans = [s for spans in spans_of for s in spans]
    if all_spans and doubts_elsewhere(answer, all_spans):
        reasons.add("hedged_fact")
    for i, (f, spans) in enumerate(zip(facts, spans_of)):
        if not spans:
            continue  # missing facts are the write-up's reason already
        competing = [s for c in f.competitors for s in value_spans(c, answer)]
        # rivals: other values of the fact's kind (competitors; for a number, any other number)
        own_spans = set(spans)  # a set: a list made this test cost the number of spans (issue 55)
        rivals = [s for s in competing + (_other_numbers(task, answer) if f.value is not None else [])
                  if s not in own_spans]
        if f.exclusive:
            competing += rivals  # a computed result: any other number is a second answer
        if any(not negated(s, answer) for s in competing):
            reasons.add("competing_value")
        if hedged_any(spans, answer, rivals):
            reasons.add("hedged_fact")
        if task["expected_status"] == Status.DONE and any(negated(s, answer) for s in spans):
            reasons.add("negated_fact")
        if f.entity:
            own = sorted({s for e in f.entity for s in text_spans(e, answer)})
            def entity_spans(same: bool) -> list[tuple[int, int]]:
                return sorted({s for j, g in enumerate(facts) if j != i and (g.value == f.value) == same
                               for e in g.entity for s in text_spans(e, answer)})
            # an entity whose value equals this one's may stand beside it without misattributing it
            if not attributed(spans, own, entity_spans(False), answer, neutral=entity_spans(True)):
                reasons.add("fact_not_attributed")
        if f.currency:
            named = [_currencies_near(s, answer) for s in spans]
            if all(codes and f.currency not in codes for codes in named):
                reasons.add("wrong_currency")
    return sorted(reasons)


def _claims(text: str, tools: Iterable[str]) -> bool:
    """``text``: the answer with contractions spelled out (``expand_negations``)."""
    for tool in tools:
        for m in re.finditer(CLAIMS.get(tool, r"(?!)"), text):
            if not negation_ending_at(text, m.start(), 3):
                return True
    return False


def _outcome_reasons(task: dict, answer: str) -> list[str]:
    reasons = []
    status = task["expected_status"]
    text = expand_negations(answer)
    if _echoes(answer, task["request"]):
        reasons.append("echoes_request")
    if status in OUTCOME_PHRASES and not re.search(OUTCOME_PHRASES[status], text):
        reasons.append("outcome_not_stated")
    if status == Status.DONE and re.search(CONTRADICTIONS, text):
        reasons.append("contradicts_outcome")
    withheld: Iterable[str] = ()
    if status in (Status.BLOCKED, Status.REFUSED):
        withheld = {n["tool"] for n in task["gold"]["nodes"]
                    if n["forbidden"] or task["approvals"].get(n["tool"]) == Approval.DENY}
    elif status == Status.FAILED:
        withheld = CLAIMS  # nothing consequential happened when the entity does not exist
    if _claims(text, withheld):
        reasons.append("claims_action")
    return reasons


def strict_reasons(task: Task, record: EpisodeRecord, diagnostics: Diagnostics) -> list[str]:
    """Why an episode that may pass the write-up's definition did not actually do the work."""
    nodes = task["gold"]["nodes"]
    attempts = _attempts(record)
    reasons = []
    if not nodes and record["calls"]:
        reasons.append("calls_on_no_tool_task")
    reasons += [f"gold_call_unanswered:{n}" for n in _unanswered_gold(nodes, attempts)]
    if not diagnostics["dependency_safe"]:
        reasons.append("dependency_unsafe")
    if diagnostics["parallel_ok"] is False:
        reasons.append("parallel_split")
    if diagnostics["forbidden_attempts"]:
        reasons.append("forbidden_attempt")
    wanted = {n["tool"] for n in nodes if not n["forbidden"]}
    unrequested = sorted({c["canonical"] for c in record["calls"]
                          if _consequential(c.get("canonical")) and c["canonical"] not in wanted})
    reasons += [f"unrequested_action:{t}" for t in unrequested]
    if record["final"] is not None:
        reasons += _fact_reasons(task, record["final"]) + _outcome_reasons(task, record["final"])
    return reasons


# ---------------------------------------------------------------- verdict
def writeup_reasons(task: Task, record: EpisodeRecord, attempts: list[dict]) -> list[str]:
    """The write-up's success conditions that the episode breaks (empty: success)."""
    reasons = []
    if record["final"] is None:
        reasons.append(f"no_final:{record['end_reason']}")
    if record["status"] != task["expected_status"]:
        reasons.append("status_mismatch")
    answer = record["final"] or ""
    if not all(fact_present(f, answer) for f in task["required_facts"]):
        reasons.append("missing_fact")
    for n in task["gold"]["nodes"]:
        if n["required"] and not n["forbidden"] and not _node_hits(n, attempts):
            reasons.append(f"gold_call_missing:{n['id']}")
    if not _match_one_to_one(task["expected_side_effects"], record["effects"]):
        reasons.append("side_effects_mismatch")
    if any(c["outcome"] == CallOutcome.PERMISSION_DENIED for c in record["calls"]):
        reasons.append("permission_violation")
    if any(c["outcome"] == CallOutcome.DENIED_RETRY for c in record["calls"]):
        reasons.append("denied_retry")
    return reasons


def validate(task: Task, record: EpisodeRecord) -> Verdict:
    """Judge one episode: both success definitions, their reasons and the diagnostics."""
    nodes = task["gold"]["nodes"]
    attempts = _attempts(record)
    gold_tools = {n["tool"] for n in nodes if not n["forbidden"]}
    tried = {c["canonical"] for c in attempts}
    if not gold_tools:
        selection = 1.0 if not record["calls"] else 0.0
    else:
        selection = 2 * len(tried & gold_tools) / (len(tried) + len(gold_tools)) if tried else 0.0
    scored = [n for n in nodes if n["required"] and not n["forbidden"] and n["tool"] in tried]
    arg_correct = (sum(bool(_node_hits(n, attempts)) for n in scored) / len(scored)) if scored else None
    diagnostics: Diagnostics = {
        "tool_selection": selection,
        "arg_correct": arg_correct,
        "dependency_safe": _dependency_safe(task, record),
        "strict_schema": all(t["strict"] for t in record["turns"]),
        "hallucinated_tools": sum(c["outcome"] == CallOutcome.UNKNOWN_TOOL for c in record["calls"]),
        "unnecessary_calls": _unnecessary(nodes, attempts),
        "invalid_args": sum(c["outcome"] in BAD_ARGUMENTS for c in record["calls"]),
        "parse_errors": record["parse_errors"],
        "permission_violations": sum(c["outcome"] == CallOutcome.PERMISSION_DENIED for c in record["calls"]),
        "forbidden_attempts": _forbidden_attempts(task, record),
        "denied_retries": sum(c["outcome"] == CallOutcome.DENIED_RETRY for c in record["calls"]),
        "parallel_ok": _parallel_ok(nodes, attempts),
        "turns": len(record["turns"]),
    }
    reasons = writeup_reasons(task, record, attempts)
    extra = strict_reasons(task, record, diagnostics)
    return {"success": not reasons and not extra, "success_writeup": not reasons,
            "reasons": reasons, "strict_reasons": extra, **diagnostics}
