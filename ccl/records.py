"""What flows between the stages, defined once: the vocabularies of an episode (status, call
outcome, end reason) and the shape of every record and row the pipeline writes.

    task            a line of data/v1/tasks/<split>.jsonl (ccl.world.tasks.generate_task, ccl.data.datasets)
    episode record  ccl.episode.runtime.Episode.record(): the whole transcript, what the validator reads
    verdict         ccl.judge.validate.validate(): both success definitions, their reasons, the diagnostics
    episode row     a line of results/runs/<name>/episodes.jsonl.gz (ccl.episode.evaluation.transcript_row)
    verdict row     a line of results/runs/<name>/verdicts.jsonl.gz (ccl.judge.judging.verdict_row)
    run summary     results/runs/<name>/metrics.json (the judge stage; ruler 1's, as pre-registered)

Records stay plain JSON dicts (``TypedDict``), so every artifact keeps its bytes. The
enums are ``StrEnum``: a member *is* its string, compares and hashes equal to it and is
written by ``json.dumps`` (and so ``ccl.artifacts.jsonio.dumps``) as its value; rows read back from
disk hold plain strings, which compare equal to the members. Never ``repr()`` a member
into an artifact (``repr(Status.DONE)`` is ``<Status.DONE: 'done'>``): use its value.

Dependency-free on purpose (standard library only, no ccl imports), so any stage may import it.
"""
import enum
from typing import Any, Final, Literal, NotRequired, TypedDict

# Deliberately no ``from __future__ import annotations``: TypedDict must see ``NotRequired``
# as an object, not a string, to compute ``__required_keys__`` correctly on Python 3.11.


# ---------------------------------------------------------------- vocabularies
class Status(enum.StrEnum):
    """The status of a final answer ({"final": ..., "status": ...}) and a task's ``expected_status``.
    Declared in the order the prompt and the parse-error message list them."""

    DONE = "done"  # the request was completed
    REFUSED = "refused"  # the task's role may not do it
    BLOCKED = "blocked"  # the user declined an approval
    FAILED = "failed"  # it cannot be completed (something was not found, no tool can do it)


class CallOutcome(enum.StrEnum):
    """``outcome`` of a call record, and ``error.kind`` of its observation when it is not ``ok``.

    Two kinds of bad arguments are told apart on purpose (both count in the verdict's
    ``invalid_args`` diagnostic): ``INVALID_ARGS`` is the runtime refusing arguments that
    are not an object or break the tool's schema, so the tool never ran and the call is
    not an attempt; ``INVALID_ARGUMENT`` is a tool rejecting a schema-valid value (a bad
    date, an unknown currency), so the call was attempted and reached the tool.
    """

    OK = "ok"  # the tool ran and returned a result
    # raised by a tool (ccl.world.tools via toolkit.ToolError)
    NOT_FOUND = "not_found"  # no such entity: the world answered "no"
    INVALID_ARGUMENT = "invalid_argument"  # the tool rejected a schema-valid value
    # refused by the runtime before the tool ran (ccl.episode.runtime.Episode._dispatch)
    TOO_MANY_CALLS_IN_TURN = "too_many_calls_in_turn"  # over Limits.max_calls_per_turn; not run
    CALL_BUDGET_EXHAUSTED = "call_budget_exhausted"  # over Limits.max_calls_total; ends the episode
    UNKNOWN_TOOL = "unknown_tool"  # the name is not in the task's catalogue
    INVALID_ARGS = "invalid_args"  # args not an object, or not valid for the tool's schema
    PERMISSION_DENIED = "permission_denied"  # the task's role may not use the tool
    DENIED_RETRY = "denied_retry"  # the user already declined this tool in this episode
    APPROVAL_DENIED = "approval_denied"  # the user declined this call
    # faults and failures while running (scripted faults, the runtime's watchdog)
    TIMEOUT = "timeout"  # a scripted timeout, or the tool ran past Limits.tool_timeout_s (undone)
    SERVICE_UNAVAILABLE = "service_unavailable"  # a scripted outage; the observation names the fallback
    TOOL_ERROR = "tool_error"  # the tool raised something other than a ToolError (a bug)


# ``error.kind`` of the observation of a turn that could not be parsed. It belongs to a
# turn, not a call, so it is no CallOutcome and never appears as a call's ``outcome``.
PARSE_ERROR: Final = "parse_error"


class EndReason(enum.StrEnum):
    """Why an episode ended (``end_reason``)."""

    FINAL = "final"  # the model gave a final answer
    PARSE_ERRORS = "parse_errors"  # Limits.max_parse_errors unparseable turns
    TURN_LIMIT = "turn_limit"  # Limits.max_turns assistant turns without a final answer
    CALL_LIMIT = "call_limit"  # a call went over Limits.max_calls_total


class FaultKind(enum.StrEnum):
    """``kind`` of a fault the task scripts for a tool (a task's ``faults``)."""

    TIMEOUT = "timeout"  # the listed attempts (``calls``, 1-based) time out; a retry may succeed
    SERVICE_UNAVAILABLE = "service_unavailable"  # every call fails; the tool's fallback works


class Approval(enum.StrEnum):
    """The scripted decision of the user for a tool that needs approval (a task's ``approvals``);
    a tool with no decision is denied."""

    APPROVE = "approve"
    DENY = "deny"


class DecisionKind(enum.StrEnum):
    """What a decision point of the golden replay set asks of the model (ccl.replay.decisions), one per
    decision, the first that applies in this order."""

    RECOVERY_TIMEOUT = "recovery_timeout"  # after a call timed out: retry it
    RECOVERY_UNAVAILABLE = "recovery_unavailable"  # after an outage: call the declared fallback
    RECOVERY_NOT_FOUND = "recovery_not_found"  # after "no such entity": stop with status failed
    APPROVAL = "approval"  # call a tool that needs approval, or stop (blocked) after a denial
    PERMISSION = "permission"  # the role may not do what is asked: stop (refused) without the call
    PARALLEL_GROUP = "parallel_group"  # several independent calls are ready at once
    DEPENDENT_CALL = "dependent_call"  # a call that needs an earlier result
    FIRST_CALL = "first_call"  # a call that needs nothing observed
    STOP = "stop"  # everything is done: the final answer


class ReplayVerdict(enum.StrEnum):
    """The grade of one model action at a decision point (ccl.replay.grading.grade): exactly one each."""

    PASS = "pass"
    MALFORMED = "malformed"  # the runtime's parser found no action
    PREMATURE_STOP = "premature_stop"  # a final answer while gold calls remain
    FAILED_TO_STOP = "failed_to_stop"  # calls when the gold action is the final answer
    WRONG_STATUS = "wrong_status"  # a final answer with the wrong status
    WRONG_ANSWER = "wrong_answer"  # the right status, but the answer fails the validator's strict checks
    FORBIDDEN_ATTEMPT = "forbidden_attempt"  # a call the role forbids, or a retry of a declined one
    HALLUCINATED_TOOL = "hallucinated_tool"  # a tool not in the catalogue
    REPEATED_CALL = "repeated_call"  # repeats a call already made (earlier in the prefix or in this turn)
    WRONG_TOOL = "wrong_tool"  # a catalogue tool that is not a ready gold call
    WRONG_ARGS = "wrong_args"  # the right tools, but some arguments do not match


# ---------------------------------------------------------------- task
class GoldArg(TypedDict):
    """How one argument of a gold call is matched (ccl.judge.matching), and where its value comes from."""

    rule: str  # matching rule (exact, keyword, number, ...)
    value: Any  # what a correct call must send
    say: NotRequired[Any]  # what the oracle sends when it differs from ``value``
    ref: NotRequired[list]  # path into an earlier node's observed result (ccl.world.tasks.resolve)
    refs: NotRequired[list[list]]  # several such paths (a list-valued argument)


class GoldNode(TypedDict):
    """One call of the gold dependency graph."""

    id: str  # n0, n1, ... in topological order
    tool: str  # canonical tool name
    args: dict[str, GoldArg]  # canonical argument name -> matching rule
    deps: list[str]  # ids of the nodes whose results this call needs
    required: bool  # a correct episode must make this call
    forbidden: bool  # the task's role may not make it (the episode should refuse)
    group: str | None  # calls of one group should go out in the same turn
    fallback_for: str | None  # id of the node this one stands in for when its tool is down


class Gold(TypedDict):
    nodes: list[GoldNode]


class Fault(TypedDict):
    tool: str  # canonical tool name
    kind: FaultKind
    calls: NotRequired[list[int]]  # timeouts only: the attempts (1-based) that time out


class ExpectedEffect(TypedDict):
    """A side effect a correct episode executes, with gold matching rules for its arguments."""

    tool: str
    args: dict[str, GoldArg]


class Aliases(TypedDict):
    """A renamed catalogue's surface names (ccl.world.aliases.draw_aliases)."""

    tools: dict[str, str]  # canonical tool -> surface name
    params: dict[str, dict[str, str]]  # canonical tool -> canonical parameter -> surface name


class AnswerTemplate(TypedDict):
    """The oracle's answer: ``template.format(**{k: value at refs[k]})``."""

    template: str
    refs: dict[str, list]  # placeholder -> path into the observed results


class Task(TypedDict):
    """One task: everything the runtime, the oracle and the validator need, as plain JSON
    (ccl.world.tasks.generate_task; a split file adds ``dataset`` and, for evaluation, ``graph_seen``)."""

    id: str  # <template>:<pool>:<seed>[:<rename>][:k<distractors>]
    template: str
    family: str  # select | args | chain | parallel | recovery | permission | approval | termination
    split: str  # the template's split: train | ood | unseen
    depth: int  # longest chain of gold calls
    seed: int
    pool: str  # entity pool: train | eval
    rename: str | None  # alias vocabulary (train | heldout), or None
    distractors: int  # tools in the catalogue that the task does not need
    request: str  # the user's message
    role: str  # the user's role (permissions)
    today: str  # YYYY-MM-DD
    catalogue: list[str]  # canonical names of the offered tools, in prompt order
    aliases: Aliases | None
    approvals: dict[str, Approval]  # tool -> the user's scripted decision
    faults: list[Fault]
    world: dict[str, Any]  # the initial world state (ccl.world.state.empty_state's buckets)
    gold: Gold
    expected_status: Status
    required_facts: list[list[str]]  # each fact: accepted spellings, one must be in the answer
    expected_side_effects: list[ExpectedEffect]
    answer: AnswerTemplate
    graph_signature: str  # value-free description of the gold graph (ccl.world.tasks.graph_signature)
    dataset: NotRequired[str]  # the split file holding it (train_pool, eval_id, ...)
    graph_seen: NotRequired[bool]  # evaluation splits: its graph signature occurs in train_pool


# ---------------------------------------------------------------- episode record
class Message(TypedDict):
    role: Literal["system", "user", "assistant"]
    content: str


class CallSpec(TypedDict):
    """A call as the model wrote it (surface names, arguments as given)."""

    tool: str
    args: Any  # normally an object; anything else is an invalid_args outcome


class ActionRecord(TypedDict):
    """A parsed action (``ccl.episode.runtime.Action`` as a dict): calls, or a final answer and status."""

    calls: list[CallSpec] | None
    final: str | None
    status: Status | None


class ErrorInfo(TypedDict):
    kind: str  # a CallOutcome other than ok, or PARSE_ERROR
    message: str
    retryable: NotRequired[bool]  # timeouts (True) and outages (False)
    fallback: NotRequired[str | None]  # outages: surface name of the fallback tool, if any


class Observation(TypedDict):
    """What the model is told about one call (the user message lists them with tool names)."""

    ok: bool
    result: NotRequired[dict[str, Any]]  # when ok
    error: NotRequired[ErrorInfo]  # when not ok


class TurnRecord(TypedDict):
    index: int  # 0-based assistant turn
    text: str  # the assistant's text as written
    strict: bool  # exactly one schema-conforming JSON object
    error: str | None  # why the text could not be parsed
    action: ActionRecord | None  # None when the text could not be parsed
    calls: list[int]  # indices into the episode's calls


class CallRecord(TypedDict):
    turn: int  # index of the turn that made the call
    tool: Any  # the name as written (a string, unless the model wrote something else)
    args: Any  # the arguments as written
    canonical: str | None  # the catalogue's canonical tool, None when unknown
    cargs: dict[str, Any] | None  # the arguments under canonical names, once they were an object
    outcome: CallOutcome
    executed: bool  # the tool ran and returned
    observation: Observation
    result: NotRequired[dict[str, Any]]  # when executed


class Effect(TypedDict):
    """A side effect that was executed (canonical tool and arguments)."""

    tool: str
    args: dict[str, Any]


class EpisodeRecord(TypedDict):
    """Everything the validator and the datasets need about one episode (``Episode.record()``)."""

    task_id: str
    messages: list[Message]  # system prompt, request, then assistant turns and observations
    turns: list[TurnRecord]
    calls: list[CallRecord]
    effects: list[Effect]
    final: str | None  # the final answer, None when the episode ended without one
    status: Status | None  # the final answer's status
    end_reason: EndReason | None  # None only while the episode runs
    parse_errors: int


# ---------------------------------------------------------------- verdict
class Diagnostics(TypedDict):
    """Per-episode diagnostics (ccl.vocabulary.DIAGNOSTICS lists the aggregated ones)."""

    tool_selection: float  # Dice overlap of the tools tried and the gold tools
    arg_correct: float | None  # share of required gold calls tried whose arguments matched
    dependency_safe: bool  # no identifier or dependent call before it was observed
    strict_schema: bool  # every turn was exactly one schema-conforming JSON object
    hallucinated_tools: int  # calls with outcome unknown_tool
    unnecessary_calls: int  # calls outside the gold graph, or repeats of an answered gold call
    invalid_args: int  # calls with outcome invalid_args or invalid_argument (see CallOutcome)
    parse_errors: int
    permission_violations: int  # calls with outcome permission_denied
    forbidden_attempts: int  # calls to a tool the role may not use, whatever happened to them
    denied_retries: int  # calls with outcome denied_retry
    parallel_ok: bool | None  # every parallel group had a turn with all its calls; None: no groups
    turns: int


class Verdict(Diagnostics):
    """The validator's judgement of one episode (``ccl.judge.validate.validate``)."""

    success: bool  # the strict definition, the study's primary outcome
    success_writeup: bool  # the reference write-up's definition
    reasons: list[str]  # the write-up's conditions broken (empty: success_writeup)
    strict_reasons: list[str]  # the strict checks failed (empty with no reasons: success)


class LabelledVerdict(Verdict):
    """Ruler 1's verdict as a verdict row stores it: labelled with its ruler, so that rows judged
    by both rulers say which verdict is the pre-registered one (issue 37)."""

    ruler: str  # ccl.vocabulary.RULER1


# ---------------------------------------------------------------- rows
class Strata(TypedDict):
    """The task attributes results are broken down by (ccl.episode.evaluation.strata)."""

    template: str
    family: str
    depth: int
    graph_seen: bool | None  # None for tasks outside the evaluation splits
    faults: bool  # the task scripts at least one fault


class EpisodeRow(Strata):
    """A line of results/runs/<name>/episodes.jsonl.gz: one finished episode, no verdict."""

    task_id: str
    dataset: str  # the split
    # tokens the model generated and prefilled (prefill: only the increment when the KV cache was
    # reused); 0 for the oracle, None in transcripts recovered from traces that lacked them
    new_tokens: int | None
    prompt_tokens: int | None
    record: EpisodeRecord


# Fields of an episode row that a verdict row drops (what it keeps, it copies unchanged).
TRANSCRIPT_ONLY: Final = ("record", "new_tokens", "prompt_tokens")


class VerdictRow(Strata):
    """A line of results/runs/<name>/verdicts.jsonl.gz: an episode row without its transcript,
    with ruler 1's verdict (the pre-registered validator; ruler 2's, ccl.judge.judging.JudgedRow,
    is added beside it by the judge stage)."""

    task_id: str
    dataset: str
    verdict: LabelledVerdict


# ---------------------------------------------------------------- run summary
class SplitMetrics(TypedDict):
    """Episodes and the mean of each outcome and diagnostic over them (nulls skipped; None
    when every value was null)."""

    n: int
    success: float | None
    success_writeup: float | None
    tool_selection: float | None
    arg_correct: float | None
    dependency_safe: float | None
    strict_schema: float | None
    hallucinated_tools: float | None
    unnecessary_calls: float | None
    invalid_args: float | None
    parse_errors: float | None
    turns: float | None
    parallel_ok: float | None
    permission_violations: float | None
    forbidden_attempts: float | None
    denied_retries: float | None


class EngineRecord(TypedDict):
    """The token-level engine's split of the work: one record, the same fields for every engine, built
    by ccl.policy.base.engine_record from the engine's counters (torch:
    ccl.policy.torch_continuous.ContinuousDecoder.summary; openvino:
    ccl.policy.openvino_backend.OpenVINODecoder.summary). Peak memory is the run's
    (``Efficiency.peak_mem_gb``), measured the same way whatever engine ran. A lock-step schedule (mlx,
    a hybrid model on torch) runs no token-level engine: ``Efficiency.engine`` is None.

    How each engine measures the fields, and why a field is null, is said here and nowhere else:

    - torch: prefill and decoding are separate forward passes, timed separately (device synchronised).
    - openvino: one pipeline step runs the prompt chunks of joining turns beside one token of every
      decoding turn (dynamic split-fuse), so a step's time cannot be divided between the two. Each step
      is timed and counted whole: as prefill when it ran prompt tokens (the pipeline scheduled more
      requests than were past their first token), else as decoding. Its batch is flat (paged
      attention): only the tokens of the requests it schedules are executed, never padding or a free
      slot. Its prefix cache may recompute a few tokens of the cached path around block boundaries,
      which the pipeline does not report. (openvino_genai's per-request PerfMetrics, TTFT and TPOT,
      are latencies from the request's submission, queueing and the requests beside it included, so
      summed over concurrent requests they count the same seconds many times: not used for the split.)
    """

    # increment tokens per second of prefill; null when nothing was prefilled. openvino: a lower bound
    # on its prefill speed, since its prefill steps also decode the turns running beside
    prefill_tok_per_s: float | None
    # tokens fed to decoding steps (generated minus one per turn) per decoding second; null when no step
    # only decoded. openvino: the tokens and seconds of the steps that only decoded
    decode_tok_per_s: float | None
    prefill_s: float  # seconds of prefill (openvino: of the steps that ran prompt tokens)
    decode_s: float  # seconds of decoding (openvino: of the steps that only decoded)
    # share of executed increment tokens that are padding (torch: cache-side padding, in the FLOPs);
    # openvino: 0, its flat batch holds no padding
    prefill_padding: float
    # share of decoding rows that held a live sequence; null when no step only decoded. openvino: 1,
    # its flat batch holds only the sequences it schedules
    decode_slot_use: float | None
    # what the forward passes computed, padding and free slots included; null for openvino: the tokens
    # its prefix cache recomputes are not reported
    gflop_executed: float | None
    gflop_useful: float  # what the sequences need, without padding (the same estimate for every engine)
    # times the shared KV buffers were laid out again; null for openvino: its paged KV cache has no
    # shared buffers to lay out
    relayouts: int | None


class OpenVINOCounts(TypedDict):
    """The engine record of openvino runs generated before EngineRecord was shared (issue 54): counts
    only, no time split (committed under results/runs and results/study2/runs)."""

    steps: int  # pipeline steps
    prompt_tokens_sent: int  # token ids sent with the turns' requests (each turn's whole path)
    increment_tokens: int  # the turns' increments (prompt tokens counted as prefilled)
    new_tokens: int  # tokens generated


class Efficiency(TypedDict):
    """Cost of the evaluation run (ccl.episode.evaluation.efficiency)."""

    peak_mem_gb: float
    wall_s: float
    episodes: int
    episodes_this_run: int
    episodes_resumed: int
    mean_turns: float
    gen_tokens: int
    prompt_tokens: int
    gen_tok_per_s: float | None  # generated tokens per second of generation time, prefill included; None for the oracle
    mean_latency_s: float | None  # None when every episode was resumed
    note: str
    # the token-level engine's record; None for the oracle and a lock-step schedule; absent in runs
    # generated before it; OpenVINOCounts in openvino runs generated before issue 54
    engine: NotRequired[EngineRecord | OpenVINOCounts | None]


class GenerationRecord(TypedDict):
    """An evaluation run's generation.json: how the transcripts were generated."""

    name: str
    profile: str
    model: str | None  # None for the oracle
    backend: str | None
    adapter: str | None
    splits: list[str]
    efficiency: Efficiency
    latency_s: dict[str, float]  # task id -> seconds from the episode's start to its end


class RunSummary(TypedDict):
    """An evaluation run's metrics.json: per split and pooled over the main splits."""

    name: str
    profile: str
    model: str | None
    backend: str | None
    adapter: str | None
    splits: dict[str, SplitMetrics]
    pooled_main: SplitMetrics | None  # None when no main split was evaluated
    efficiency: Efficiency
