"""The server's connection cap: below the descriptor limit, the excess refused with a 503 at once, one
log line per burst (ccl/serve/connections.py)."""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ccl.serve import connections
from ccl.serve.connections import LineLog, plan

ROOT = Path(__file__).resolve().parents[1]
resource = pytest.importorskip("resource")  # POSIX only


def test_the_cap_leaves_room_for_what_is_open_one_accept_burst_and_spare_descriptors():
    assert plan(256, 40, 128) == (256 - 40 - 32 - 16 - 16, 32)  # a low limit shrinks the burst to 256 // 8
    assert plan(20_000, 30, 128) == (20_000 - 30 - 128 - 16 - 16, 128)
    assert plan(None, 30, 128) == (None, 128)  # no limit, no cap
    with pytest.raises(OSError, match=r"the descriptor limit \(40\) leaves no room for connections \(20 open"):
        plan(40, 20, 128)  # 40 - 20 - 5 - 16 - 16 < 1


def test_one_line_per_burst_counting_the_lines_held_back(monkeypatch):
    now, said = [100.0], []
    monkeypatch.setattr(connections.time, "monotonic", lambda: now[0])
    log = LineLog(said.append)
    for _ in range(3):
        log("refusing")
    now[0] += connections.LOG_EVERY_S
    log("refusing")
    assert said == ["refusing", "refusing (2 more since the last line)"]


def _start(tmp_path: Path, limit: int) -> tuple[subprocess.Popen, int]:
    """scripts/serve.py --no-model under a lowered descriptor limit; (process, port)."""

    def lower() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    proc = subprocess.Popen([sys.executable, "-m", "scripts.serve", "--no-model", "--port", "0",
                             "--site", str(tmp_path / "site"), "--data", str(tmp_path / "data")],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=lower)
    line = proc.stdout.readline()
    assert line.startswith("serve: http://127.0.0.1:"), line + proc.stderr.read()
    return proc, int(line.split("127.0.0.1:")[1].split("/")[0])


def _get(port: int, path: str, timeout: float = 5.0) -> tuple[int, dict]:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


@pytest.mark.skipif(sys.platform == "win32", reason="descriptor limits are POSIX")
def test_idle_sockets_past_the_cap_are_refused_at_once_and_health_answers_when_they_close(tmp_path):
    proc, port = _start(tmp_path, 256)
    idle: list[socket.socket] = []
    try:
        status, health = _get(port, "/api/health")
        cap = health["connections"]["cap"]
        assert status == 200 and 100 < cap < 256 - 32 - 16 - 16, health["connections"]
        for _ in range(300):  # more idle connections than the cap, and than the limit
            idle.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        time.sleep(1.5)  # the server has accepted what it will; the rest were answered and closed
        t0 = time.monotonic()
        status, body = _get(port, "/api/health")
        assert status == 503 and body["error"]["code"] == "connection_limit"
        assert time.monotonic() - t0 < 5  # refused at once (on the request), not after the 15 s idle timeout
        for s in idle:
            s.close()
        deadline = time.monotonic() + 5
        while True:  # the idle connections' closes reach the server
            status, health = _get(port, "/api/health")
            if status == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert status == 200 and health["connections"]["refused"] >= 300 - cap
    finally:
        for s in idle:
            s.close()
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert "Traceback" not in err and "accept failed" not in err, err  # the cap kept accept() below EMFILE
    lines = [line for line in err.splitlines() if "refusing new ones with 503" in line]
    assert 1 <= len(lines) <= 2, err  # one per burst (a second only if the burst outlasted LOG_EVERY_S)
