"""scripts/serve.py's library (ccl/serve/app.py): the OpenAI-compatible endpoint with the embedded
model on torch (loaded once), live episodes as NDJSON, bad input, static files, 127.0.0.1 only."""
import http.client
import json
import socket

import pytest
import torch
from openai import BadRequestError, NotFoundError, OpenAI

from ccl.artifacts.jsonio import read_jsonl
from ccl.policy.base import GenConfig
from ccl.policy.load import load_backend
from ccl.serve.app import App, Provider
from ccl.serve.http import serve_in_thread
from scripts.model_store import model_store

MODEL = "smollm2-135m-instruct"
CHAT = [{"role": "system", "content": "Answer in one word."}, {"role": "user", "content": "Name a colour."}]


def start(app):
    server, thread = serve_in_thread(app, 0)
    return server, server.server_address[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("serve")
    pub = root / "public"
    (pub / "assets").mkdir(parents=True)
    (pub / "index.html").write_text("<h1>report</h1>")
    (pub / "assets" / "app.js").write_text("console.log(1)")
    (pub / "data.json").write_text('{"a": 1}')
    (root / "secret.txt").write_text("TOP SECRET")
    (pub / "escape").symlink_to(root / "secret.txt")
    return pub


@pytest.fixture(scope="module")
def backend():
    b = load_backend(model_store(), MODEL, "torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # two threads on two busy cores decode 10-20x slower (OpenMP spin-waits)
    yield b
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def model_server(backend, smoke_data, site):
    app = App([Provider(MODEL, backend, "torch")], site=site, data=smoke_data, max_body=4096,
              gen=GenConfig(max_new_tokens=16), quiet=True)
    server, port = start(app)
    yield port
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def bare_server(smoke_data, tmp_path_factory):
    """No model, no site: site and model endpoints explain themselves; oracle episodes run."""
    app = App([], site=tmp_path_factory.mktemp("nosite") / "public", data=smoke_data, quiet=True)
    server, port = start(app)
    yield server, port
    server.shutdown()
    server.server_close()


def client(port):
    return OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=0, timeout=60)


def request(port, method, path, body=None, headers=None):
    """Raw HTTP (no client-side path normalisation): (status, headers, body bytes)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    if isinstance(body, (dict, list)):
        body = json.dumps(body)
    hdrs = {"Content-Type": "application/json"} if body is not None else {}
    conn.request(method, path, body=body, headers={**hdrs, **(headers or {})})
    r = conn.getresponse()
    out = r.status, dict(r.getheaders()), r.read()
    conn.close()
    return out


def error(port, method, path, body=None, headers=None):
    status, hdrs, data = request(port, method, path, body, headers)
    err = json.loads(data)["error"]
    assert set(err) >= {"message", "type"} and hdrs["Content-Type"].startswith("application/json")
    return status, err["message"]


def events(port, body):
    status, hdrs, data = request(port, "POST", "/api/episode", body)
    assert status == 200 and hdrs["Content-Type"].startswith("application/x-ndjson"), data[:300]
    return [json.loads(line) for line in data.decode().splitlines()]


def test_openai_client_completion_and_models(model_server, backend):
    c = client(model_server)
    r = c.chat.completions.create(model=MODEL, messages=CHAT, max_tokens=8, temperature=0)
    choice = r.choices[0]
    assert isinstance(choice.message.content, str) and choice.message.role == "assistant"
    assert choice.finish_reason in ("stop", "length")
    prompt_ids = backend.tok(backend.render(CHAT), add_special_tokens=False).input_ids
    assert r.usage.prompt_tokens == len(prompt_ids)
    assert 0 < r.usage.completion_tokens <= 8
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens
    assert [m.id for m in c.models.list()] == [MODEL]
    assert c.models.retrieve(MODEL).id == MODEL


def test_greedy_and_seeded_requests_repeat(model_server):
    c = client(model_server)
    texts = [c.chat.completions.create(model=MODEL, messages=CHAT, max_completion_tokens=6,
                                       temperature=0).choices[0].message.content for _ in range(2)]
    assert texts[0] == texts[1]
    sampled = [c.chat.completions.create(model=MODEL, messages=CHAT, max_tokens=6, temperature=1.0, top_p=0.9,
                                         seed=7).choices[0].message.content for _ in range(2)]
    assert sampled[0] == sampled[1]


def test_bad_requests_are_clear_4xx_and_the_server_keeps_serving(model_server, smoke_data):
    port = model_server
    chat = "/v1/chat/completions"
    ok = {"model": MODEL, "messages": CHAT, "max_tokens": 4}
    cases = [
        (("POST", chat, '{"model": "x", '), 400, "malformed JSON"),
        (("POST", chat, "[1, 2]"), 400, "JSON object"),
        (("POST", chat, {**ok, "messages": [{"role": "user", "content": "x" * 5000}]}), 413, "4096-byte limit"),
        (("POST", chat, "{}", {"Content-Type": "text/plain"}), 415, "application/json"),
        (("POST", chat, {**ok, "model": "gpt-9"}), 404, MODEL),
        (("POST", chat, {**ok, "messages": "hi"}), 400, "messages"),
        (("POST", chat, {**ok, "messages": [{"role": "robot", "content": "hi"}]}), 400, "messages[0].role"),
        (("POST", chat, {**ok, "messages": [{"role": "user", "content": 3}]}), 400, "messages[0].content"),
        (("POST", chat, {**ok, "max_tokens": 0}), 400, "max_tokens"),
        (("POST", chat, {**ok, "max_tokens": 10**6}), 400, "max_tokens"),
        (("POST", chat, {**ok, "max_tokens": "8"}), 400, "max_tokens"),
        (("POST", chat, {**ok, "temperature": -1}), 400, "temperature"),
        (("POST", chat, {**ok, "stream": "yes"}), 400, "stream"),
        (("GET", chat), 405, "POST"),
        (("GET", "/v1/nope"), 404, "unknown path"),
        (("GET", "/api/tasks?split=nope"), 404, "'nope'"),
        (("POST", "/api/episode", {"task_id": "no:such:task", "model": "oracle"}), 404, "no:such:task"),
        (("POST", "/api/episode", {"task_id": "x", "split": "eval_zzz", "model": "oracle"}), 404, "eval_zzz"),
        (("POST", "/api/episode", {"task_id": "x", "model": "gpt-9"}), 404, MODEL),
        (("GET", "/api/health", None, {"Host": "evil.example:80"}), 403, "evil.example"),
    ]
    for args, status, needle in cases:
        got, message = error(port, *args)
        assert (got, needle in message) == (status, True), (args[:2], got, message)
    with pytest.raises(BadRequestError, match="tool_choice"):
        client(port).chat.completions.create(model=MODEL, messages=CHAT, tools=[], tool_choice="required")
    with pytest.raises(NotFoundError, match=MODEL):
        client(port).chat.completions.create(model="gpt-9", messages=CHAT)
    # a body announced as too large is refused before it is read; no length at all is 411
    for length, status in (("Content-Length: 999999999\r\n", b"413"), ("", b"411")):
        with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
            s.sendall(f"POST {chat} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                      f"{length}\r\n".encode())
            assert s.recv(200).startswith(b"HTTP/1.1 " + status)
    r = client(port).chat.completions.create(model=MODEL, messages=CHAT, max_tokens=2)
    assert r.usage.completion_tokens > 0


def test_task_list_and_health(bare_server, smoke_data):
    _, port = bare_server
    status, _, data = request(port, "GET", "/api/tasks?split=eval_id")
    listing = json.loads(data)
    ids = [t["id"] for t in read_jsonl(smoke_data / "eval_id.jsonl")]
    assert status == 200 and [t["id"] for t in listing["tasks"]] == ids and "eval_ood" in listing["splits"]
    assert {"id", "request", "family", "template"} <= set(listing["tasks"][0])
    health = json.loads(request(port, "GET", "/api/health")[2])
    assert health["status"] == "ok" and health["model"] is None and health["episode_models"] == ["oracle"]


def test_oracle_episode_streams_start_messages_end(bare_server, smoke_data):
    _, port = bare_server
    task = next(iter(read_jsonl(smoke_data / "eval_id.jsonl")))
    evs = events(port, {"task_id": task["id"], "split": "eval_id", "model": "oracle"})
    assert evs[0]["event"] == "start" and evs[-1]["event"] == "end"
    assert evs[0]["task"] == {"id": task["id"], "request": task["request"], "family": task["family"],
                              "template": task["template"], "split": "eval_id", "role": task["role"]}
    msgs = [e["message"] for e in evs[1:-1]]
    assert all(e["event"] == "message" for e in evs[1:-1]) and msgs[0]["role"] == "assistant"
    end = evs[-1]
    assert end["verdict"]["success"] is True
    assert end["record"]["messages"][2:] == msgs and end["record"]["task_id"] == task["id"]


def test_model_episode_streams_assistant_turns(model_server, smoke_data):
    task = next(iter(read_jsonl(smoke_data / "eval_id.jsonl")))
    evs = events(model_server, {"task_id": task["id"], "split": "eval_id", "model": MODEL, "max_tokens": 12})
    assert evs[0]["event"] == "start" and evs[-1]["event"] == "end"
    assert any(e["event"] == "message" and e["message"]["role"] == "assistant" for e in evs)
    assert isinstance(evs[-1]["verdict"]["success"], bool) and evs[-1]["usage"]["completion_tokens"] > 0


def test_no_model_and_no_site_explain_themselves(bare_server):
    server, port = bare_server
    status, message = error(port, "GET", "/")
    assert status == 404 and "export_web" in message
    status, message = error(port, "POST", "/v1/chat/completions", {"model": MODEL, "messages": CHAT})
    assert status == 404 and "--no-model" in message  # not 503, which OpenAI clients retry


def test_binds_loopback_only(bare_server):
    server, _ = bare_server
    assert server.server_address[0] == "127.0.0.1" and server.socket.getsockname()[0] == "127.0.0.1"


def test_static_files_and_traversal(model_server):
    port = model_server
    for path, ctype, body in [("/", "text/html", b"<h1>report</h1>"), ("/index.html", "text/html", None),
                              ("/assets/app.js", "text/javascript", b"console.log(1)"),
                              ("/data.json", "application/json", b'{"a": 1}')]:
        status, hdrs, data = request(port, "GET", path)
        assert status == 200 and hdrs["Content-Type"].startswith(ctype), path
        assert body is None or data == body
    for path in ("/../secret.txt", "/assets/../../secret.txt", "/%2e%2e/secret.txt", "/..%2fsecret.txt",
                 "/escape"):
        status, _, data = request(port, "GET", path)
        assert status == 403 and b"SECRET" not in data, path
    assert error(port, "GET", "/missing.css")[0] == 404
    assert error(port, "POST", "/index.html", {})[0] == 405
    status, hdrs, data = request(port, "HEAD", "/data.json")
    assert status == 200 and hdrs["Content-Length"] == "8" and data == b""
