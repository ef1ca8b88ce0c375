"""The OpenAI-compatible server with tools (ccl/serve/app.py, ccl/serve/openai_format.py, ccl/serve/client.py): a
multi-turn tool episode through the openai client equals the episode loop's; the fallback chain; the
server under abuse (bursts, idle floods, stalled and abandoned clients, hostile input)."""
from __future__ import annotations

import concurrent.futures as cf
import http.client
import json
import socket
import time
from types import SimpleNamespace

import pytest
import torch
from openai import OpenAI

from ccl.artifacts.jsonio import finite_only, read_jsonl
from ccl.episode.prompt import compose_system, system_prompt, task_context
from ccl.episode.runtime import run_episode
from ccl.policy.base import GenConfig, GenOut, ModelPolicy
from ccl.policy.load import load_backend
from ccl.serve.app import App, Provider
from ccl.serve.client import ServerPolicy
from ccl.serve.episodes import json_line
from ccl.serve.http import serve_in_thread
from ccl.serve.openai_format import action_choice, episode_messages, study_messages
from ccl.world.catalogue import Catalogue, render_tools
from scripts.model_store import model_store

MODEL = "smollm2-135m-instruct"


class FakeBackend:
    """A backend that answers with scripted texts (one per call, the last repeated), decoding one
    "token" per character and asking ``stop`` after each, ``delay_s`` per character."""

    def __init__(self, texts: list[str], delay_s: float = 0.0, context: int = 100_000, fail: bool = False):
        self.texts, self.delay_s, self.fail, self.calls, self.decoded = texts, delay_s, fail, 0, []
        self.model = SimpleNamespace(config=SimpleNamespace(max_position_embeddings=context))
        self.tok = lambda text, add_special_tokens=False: SimpleNamespace(input_ids=text.split())

    def render(self, messages: list[dict]) -> str:
        return "\n".join(f"<{m['role']}>{m['content']}" for m in messages) + "\n<assistant>"

    def generate(self, states, prompts, gen, seeds, stop=None):
        if self.fail:
            raise RuntimeError("device lost")
        text = self.texts[min(self.calls, len(self.texts) - 1)]
        self.calls += 1
        out = ""
        for ch in text[:gen.max_new_tokens]:
            time.sleep(self.delay_s)
            out += ch
            if stop is not None and stop():
                break
        self.decoded.append(len(out))
        return [GenOut(out, len(prompts[0].split()), len(out))]


def client(port, retries=0):
    return OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=retries, timeout=60)


def start(app):
    server, _ = serve_in_thread(app, 0)
    return server, server.server_address[1]


# ---------------------------------------------------------------- the format
def test_a_tasks_tools_render_to_the_runtimes_catalogue_and_the_client_prompt_is_the_loops(smoke_data):
    tasks = [t for path in sorted(smoke_data.glob("*.jsonl")) for t in read_jsonl(path)]
    assert len(tasks) > 100 and any(t.get("aliases") for t in tasks)  # renamed catalogues included
    for task in tasks:
        cat = Catalogue(task)
        assert render_tools(cat.openai_tools()) == cat.render()
        assert compose_system(task_context(task), render_tools(cat.openai_tools())) == system_prompt(task)


def test_calls_come_back_as_tool_calls_and_answers_as_content():
    calls = action_choice('{"calls": [{"tool": "get_weather", "args": {"city": "Oslo"}}, '
                          '{"tool": "get_time", "args": {}}]}', cut=False)
    assert calls.finish_reason == "tool_calls" and calls.message["content"] is None
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls.message["tool_calls"]] \
        == [("get_weather", {"city": "Oslo"}), ("get_time", {})]
    assert len({c["id"] for c in calls.message["tool_calls"]}) == 2
    final = action_choice('{"final": "It is 3 C.", "status": "done"}', cut=False)
    assert (final.message["content"], final.finish_reason, final.action.status) == ("It is 3 C.", "stop", "done")
    broken = action_choice("I will call the weather tool", cut=True)
    assert (broken.message["content"], broken.finish_reason, broken.action) == ("I will call the weather tool",
                                                                               "length", None)


def test_tool_messages_become_one_observation_and_known_ids_keep_the_models_text():
    line = '{"ok": true, "result": {"temp_c": 3}, "tool": "get_weather"}'
    msgs = [{"role": "system", "content": "Today is X."}, {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}},
                {"id": "call_b", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_a", "content": line},
            {"role": "tool", "tool_call_id": "call_b", "content": "14:00"}]
    raw = '{"calls":[{"tool":"get_weather","args":{"city":"Oslo"}},{"tool":"get_time","args":{}}]}'
    context, study = study_messages(msgs, {("call_a", "call_b"): raw}.get)
    assert context == "Today is X." and study[1] == {"role": "assistant", "content": raw}
    assert study[2]["content"] == ('Results:\n{"ok":true,"result":{"temp_c":3},"tool":"get_weather"}\n'
                                   '{"ok":true,"result":"14:00","tool":"get_time"}\n'
                                   'If these results complete the request, reply with {"final": ..., "status": ...}; '
                                   'otherwise call the next tools.')
    _, unknown = study_messages(msgs, lambda ids: None)  # ids the server never gave: the training form
    assert unknown[1]["content"] == ('{"calls": [{"tool": "get_weather", "args": {"city": "Oslo"}}, '
                                     '{"tool": "get_time", "args": {}}]}')
    back = episode_messages([{"role": "user", "content": "Weather?"}, {"role": "assistant", "content": raw},
                             study[2]], {0: ["call_a", "call_b"]})
    assert [m["role"] for m in back] == ["user", "assistant", "tool", "tool"] and back[3]["content"] == \
        '{"ok":true,"result":"14:00","tool":"get_time"}'


def test_non_finite_numbers_leave_as_strings_so_json_parse_reads_every_line():
    line = json_line({"event": "end", "args": {"x": float("nan"), "y": [float("-inf"), 1.5]}})
    # the spelling the model wrote (json's own), the same in every record the project writes (jsonio.finite_only)
    assert json.loads(line, parse_constant=lambda c: pytest.fail(c)) == {
        "args": {"x": "NaN", "y": ["-Infinity", 1.5]}, "event": "end"}
    assert finite_only((1.0, float("inf"))) == [1.0, "Infinity"]


# ---------------------------------------------------------------- the real student, through the openai client
@pytest.fixture(scope="module")
def student():
    b = load_backend(model_store(), MODEL, "torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield b
    torch.set_num_threads(threads)


class ReplayBackend:
    """The student's chat template with scripted answers keyed by the exact prompt: the oracle's action
    for each prompt the episode loop renders, and a non-action for any other prompt. Driven through the
    server, an episode replays the oracle only if every prompt the server builds is byte-identical."""

    def __init__(self, student, answers: dict[str, str]):
        self.render, self.tok, self.model, self.answers = student.render, student.tok, student.model, answers

    def generate(self, states, prompts, gen, seeds, stop=None):
        text = self.answers.get(prompts[0], "unknown prompt")
        return [GenOut(text, 0, len(self.tok(text, add_special_tokens=False).input_ids))]


def oracle_answers(student, tasks) -> dict[str, str]:
    from ccl.episode.oracle import OraclePolicy
    answers = {}
    for task in tasks:
        oracle = OraclePolicy()

        class Recording:
            memory = oracle.memory

            def act(self, ep, memory):
                text = oracle.act(ep, memory)
                answers[student.render(ep.messages)] = text
                return text
        run_episode(task, Recording())
    return answers


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
def test_a_multi_turn_tool_episode_through_the_openai_client_takes_the_loops_actions(student, smoke_data, tmp_path,
                                                                                      stream):
    tasks = [t for split in ("eval_id", "eval_ood") for t in read_jsonl(smoke_data / f"{split}.jsonl")]
    backend = ReplayBackend(student, oracle_answers(student, tasks))
    server, port = start(App([Provider("replay", backend, "fake")], site=tmp_path, data=smoke_data, quiet=True))
    try:
        turns = parallel = 0
        for task in tasks:
            loop = run_episode(task, ModelPolicy(backend, GenConfig(), continuous=False))
            policy = ServerPolicy(client(port), "replay", GenConfig(), stream=stream)
            served = run_episode(task, policy)
            assert [t["text"] for t in served.turns] == [t["text"] for t in loop.turns], task["id"]
            assert served.record()["messages"] == loop.record()["messages"]
            assert "unknown prompt" not in [t["text"] for t in served.turns]  # every prompt was the loop's
            for turn, sent in zip(served.turns, policy.turns):
                calls = turn["action"]["calls"] or []
                assert sent.tool_calls == calls
                assert sent.finish_reason == ("tool_calls" if calls else "stop")
                turns += 1
                parallel += len(calls) > 1
        assert turns > 2 * len(tasks) and parallel > 0  # multi-turn episodes, parallel calls among them
    finally:
        server.shutdown()


@pytest.mark.slow  # about half a minute or more on 2 cores: CI runs it (.ci/run), the default suite does not
def test_the_real_students_greedy_turns_through_the_server_equal_the_loops(student, smoke_data, tmp_path):
    """Its text (parse errors included) is the same through the server as in the episode loop."""
    gen = GenConfig(max_new_tokens=48)
    server, port = start(App([Provider(MODEL, student, "torch")], site=tmp_path, data=smoke_data, quiet=True))
    try:
        for task in list(read_jsonl(smoke_data / "eval_id.jsonl"))[:2]:
            loop = run_episode(task, ModelPolicy(student, gen, continuous=False))
            served = run_episode(task, ServerPolicy(client(port), MODEL, gen))
            assert [t["text"] for t in served.turns] == [t["text"] for t in loop.turns], task["id"]
    finally:
        server.shutdown()


# ---------------------------------------------------------------- the chain
CALL = '{"calls": [{"tool": "get_weather", "args": {"city": "Oslo"}}]}'
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather now.",
                                           "parameters": {"type": "object", "properties": {
                                               "city": {"type": "string", "description": "city"}},
                                               "required": ["city"]}}}]
ASK = [{"role": "user", "content": "Weather in Oslo?"}]


def chain_app(tmp_path, first: FakeBackend, second: FakeBackend, timeout_s: float = 30.0) -> App:
    return App([Provider("student", first, "fake"), Provider("teacher", second, "fake")],
               ("student", "teacher"), site=tmp_path, data=tmp_path, quiet=True, request_timeout_s=timeout_s)


@pytest.mark.parametrize("first, reason", [
    (FakeBackend(["Sure, let me check the weather."]), "malformed"),
    (FakeBackend([CALL], context=8), "context_overflow"),
    (FakeBackend([CALL * 40], delay_s=0.01), "timeout"),
    (FakeBackend([CALL], fail=True), "error")], ids=["malformed", "overflow", "timeout", "error"])
def test_the_chain_falls_back_to_the_teacher_and_records_why(tmp_path, first, reason):
    teacher = FakeBackend([CALL])
    server, port = start(chain_app(tmp_path, first, teacher, timeout_s=0.5))
    try:
        r = client(port).chat.completions.create(model="chain", messages=ASK, tools=TOOLS, max_tokens=4000)
        assert r.choices[0].finish_reason == "tool_calls" and r.choices[0].message.tool_calls[0].function.name == \
            "get_weather"
        ccl = r.model_extra["ccl"]
        assert [a["outcome"] for a in ccl["attempts"]] == [reason, "ok"] and ccl["provider"] == "teacher"
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/api/requests?last=1")
        record = json.loads(conn.getresponse().read())["requests"][-1]
        assert (record["provider"], record["fallbacks"], record["outcome"]) == ("teacher", 1, "ok")
        assert record["completion_tokens"] == sum(a["completion_tokens"] for a in record["attempts"])
        # the student alone answers as it can: its own text, or the error, with no fallback
        alone = client(port).chat.completions.create(model="student", messages=ASK, tools=TOOLS, max_tokens=4000) \
            if reason in ("malformed", "timeout") else None
        if alone is not None:
            assert alone.model_extra["ccl"]["provider"] == "student" and len(alone.model_extra["ccl"]["attempts"]) == 1
    finally:
        server.shutdown()
    assert teacher.calls == 1


def test_a_good_first_answer_never_reaches_the_teacher(tmp_path):
    teacher = FakeBackend([CALL])
    server, port = start(chain_app(tmp_path, FakeBackend(['{"final": "3 C in Oslo.", "status": "done"}']), teacher))
    try:
        r = client(port).chat.completions.create(model="chain", messages=ASK, tools=TOOLS)
        assert (r.choices[0].message.content, r.choices[0].finish_reason) == ("3 C in Oslo.", "stop")
        assert r.model_extra["ccl"]["status"] == "done" and teacher.calls == 0
        assert [m.id for m in client(port).models.list()] == ["student", "teacher", "chain"]
    finally:
        server.shutdown()


# ---------------------------------------------------------------- abuse
def raw_request(port, data: bytes, timeout=10) -> bytes:
    """The reply's status line's code and the rest (aiohttp answers its own parse errors as HTTP/1.0)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        reply = s.recv(4096)
    return reply.split(b" ", 1)[1]


@pytest.fixture()
def fake_server(tmp_path):
    site = tmp_path / "public"
    site.mkdir()
    (site / "index.html").write_text("<h1>ok</h1>")
    slow = FakeBackend(["x" * 100_000], delay_s=0.002)
    app = App([Provider("fast", FakeBackend([CALL]), "fake"), Provider("slow", slow, "fake")],
              site=site, data=tmp_path, quiet=True, request_timeout_s=30)
    server, port = start(app)
    yield port, app, slow
    server.shutdown()


def get(port, path="/api/health", timeout=10) -> tuple[int, float]:
    t0 = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    conn.request("GET", path)
    status = conn.getresponse().status
    conn.close()
    return status, time.perf_counter() - t0


def test_a_burst_of_200_clients_is_answered(fake_server):
    port, _, _ = fake_server
    with cf.ThreadPoolExecutor(200) as pool:
        got = list(pool.map(lambda _: get(port, "/index.html", timeout=20), range(200)))
    assert [s for s, _ in got] == [200] * 200
    body = json.dumps({"model": "fast", "messages": ASK, "tools": TOOLS}).encode()

    def chat(_):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
        r = conn.getresponse()
        return r.status, json.loads(r.read())["choices"][0]["finish_reason"]
    with cf.ThreadPoolExecutor(50) as pool:
        assert list(pool.map(chat, range(50))) == [(200, "tool_calls")] * 50


def test_an_idle_connection_flood_does_not_lock_others_out(fake_server):
    port, _, _ = fake_server
    idle = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(300)]
    try:
        half = idle[0]
        half.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # headers never finished
        status, seconds = get(port)
        assert status == 200 and seconds < 2.0
    finally:
        for s in idle:
            s.close()


def test_an_abandoned_generation_is_cancelled_and_a_stalled_client_delays_no_one(fake_server):
    port, app, slow = fake_server
    body = json.dumps({"model": "slow", "messages": ASK, "max_tokens": 4000}).encode()
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
    time.sleep(0.5)
    s.close()  # the client leaves mid-generation
    deadline = time.monotonic() + 10
    while not (slow.decoded and app.log) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert slow.decoded and slow.decoded[0] < 1000  # of 4000: stopped soon after the client left
    assert app.log[-1]["cancelled"] is True
    stalled = socket.create_connection(("127.0.0.1", port), timeout=10)  # sends half a request, then nothing
    stalled.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 500\r\n\r\n{\"model\":")
    try:
        t0 = time.perf_counter()
        r = client(port).chat.completions.create(model="fast", messages=ASK, tools=TOOLS)
        assert r.choices[0].finish_reason == "tool_calls" and time.perf_counter() - t0 < 2.0
    finally:
        stalled.close()


def test_hostile_input_gets_4xx_and_the_server_keeps_serving(fake_server):
    port, _, _ = fake_server
    chat = b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    assert raw_request(port, chat + "Content-Length: ²\r\n\r\n{}".encode()).startswith(b"400")
    assert raw_request(port, b"GET /" + b"a" * 300 + b".html HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") \
        .startswith(b"404")
    bad = b'{"model": "fast", "messages": [{"role": "user", "content": "\xff\xfe"}]}'
    assert raw_request(port, chat + f"Content-Length: {len(bad)}\r\n\r\n".encode() + bad).startswith(b"400")
    surrogate = b'{"model": "fast", "messages": [{"role": "user", "content": "\\ud800 hi"}]}'
    reply = raw_request(port, chat + f"Content-Length: {len(surrogate)}\r\n\r\n".encode() + surrogate)
    assert reply.startswith(b"400") and b"surrogate" in reply
    r = client(port).chat.completions.create(model="fast", messages=ASK, temperature=1e-300)
    assert r.choices[0].message.content == CALL
    for body, needle in [({"model": "fast", "messages": ASK, "tools": "all"}, "tools must be a list"),
                         ({"model": "fast", "messages": ASK, "tools": [{"type": "function"}]}, "tools[0]"),
                         ({"model": "fast", "messages": [{"role": "tool", "tool_call_id": "nope", "content": "x"}],
                           "tools": TOOLS}, "answers no earlier tool call"),
                         ({"model": "fast", "messages": [{"role": "tool", "tool_call_id": [], "content": "x"}],
                           "tools": TOOLS}, "answers no earlier tool call"),
                         ({"model": "fast", "tools": TOOLS, "messages": [*ASK, {"role": "assistant", "tool_calls": [
                             {"id": "c1", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}]}]},
                          "arguments must be a JSON object written as a string")]:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
        resp = conn.getresponse()
        assert (resp.status, needle in json.loads(resp.read())["error"]["message"]) == (400, True), body
    assert get(port, "/api/requests?last=%C2%B2")[0] == 400
    assert get(port)[0] == 200


def test_streaming_sends_role_deltas_finish_usage_and_done(fake_server):
    port, _, _ = fake_server
    body = json.dumps({"model": "fast", "messages": ASK, "tools": TOOLS, "stream": True,
                       "stream_options": {"include_usage": True}})
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
    resp = conn.getresponse()
    assert resp.status == 200 and resp.getheader("Content-Type").startswith("text/event-stream")
    events = [e[len("data: "):] for e in resp.read().decode().split("\n\n") if e]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    args = "".join(c["choices"][0]["delta"]["tool_calls"][0]["function"].get("arguments", "")
                   for c in chunks if c["choices"] and "tool_calls" in c["choices"][0]["delta"])
    assert json.loads(args) == {"city": "Oslo"}
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls" and chunks[-1]["choices"] == []
    assert chunks[-1]["usage"]["completion_tokens"] == len(CALL)


def test_waiting_for_the_generation_thread_does_not_count_against_the_time_bound(tmp_path):
    """Three requests of 0.3 s each, a 0.5 s bound: the third waits 0.6 s and is still not cut."""
    slowish = FakeBackend([CALL], delay_s=0.3 / len(CALL))
    server, port = start(App([Provider("m", slowish, "fake")], site=tmp_path, data=tmp_path, quiet=True,
                             request_timeout_s=0.5))
    try:
        with cf.ThreadPoolExecutor(3) as pool:
            replies = list(pool.map(lambda _: client(port).chat.completions.create(
                model="m", messages=ASK, tools=TOOLS), range(3)))
        assert [r.model_extra["ccl"]["attempts"][0]["outcome"] for r in replies] == ["ok"] * 3
        assert slowish.decoded == [len(CALL)] * 3
    finally:
        server.shutdown()


def test_bodies_in_many_reads_and_chunked_bodies_are_read_whole(fake_server):
    port, _, _ = fake_server
    big = {"model": "fast", "messages": [{"role": "user", "content": "x" * 600_000}], "tools": TOOLS}
    r = client(port).chat.completions.create(**big)  # over 256 KiB: several socket reads
    assert r.choices[0].finish_reason == "tool_calls"
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    data = json.dumps({"model": "fast", "messages": ASK, "tools": TOOLS}).encode()
    conn.request("POST", "/v1/chat/completions", body=iter([data[:10], data[10:]]),
                 headers={"Content-Type": "application/json"}, encode_chunked=True)
    resp = conn.getresponse()
    assert resp.status == 200 and json.loads(resp.read())["choices"][0]["finish_reason"] == "tool_calls"


def test_when_the_last_provider_fails_the_earlier_answer_stands(tmp_path):
    server, port = start(chain_app(tmp_path, FakeBackend(["Let me think."]), FakeBackend([CALL], fail=True)))
    try:
        r = client(port).chat.completions.create(model="chain", messages=ASK, tools=TOOLS)
        assert (r.choices[0].message.content, r.choices[0].finish_reason) == ("Let me think.", "stop")
        assert [a["outcome"] for a in r.model_extra["ccl"]["attempts"]] == ["malformed", "error"]
        assert r.model_extra["ccl"]["provider"] == "student"
    finally:
        server.shutdown()


def test_a_model_served_twice_under_one_name_is_refused():
    from ccl.models.registry import ModelError
    from ccl.serve.app import load_app
    with pytest.raises(ModelError, match="served twice"):
        load_app(model_store(), [(MODEL, "torch", None), (MODEL, "torch", None)], chain=True,
                 site=None, data=None)
