"""Load test of the local server (loopback only, bounded in count and time): latency percentiles and
errors under concurrent clients, with an idle-connection flood held open meanwhile.

    python -m scripts.load_test                         # site + health + chat on the profile's student
    python -m scripts.load_test --no-model              # site and health only
    python -m scripts.load_test --clients 200 --requests 600 --idle 300 --chat-share 0.1

Starts the server in this process on a free port, holds ``--idle`` connections open without a word,
then ``--clients`` threads send ``--requests`` requests in all (a mix of the site's index page,
/api/health and, with a model, chat completions of ``--max-tokens`` tokens), each request on its own
connection. Prints one line per request kind and overall: count, errors, p50 / p95 / max latency in
seconds, and writes the same as JSON with ``--out``. Stops early at ``--deadline`` seconds.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import http.client
import json
import socket
import sys
import time
from pathlib import Path

import numpy as np

from ccl.config import ModelsConfig, load_params, stage_config
from ccl.policy.base import GenConfig
from ccl.serve.app import load_app
from ccl.serve.http import serve_in_thread

from .layout import DATA, PARAMS, SITE
from .model_store import model_store

CHAT = [{"role": "user", "content": "Name a colour."}]


def one(port: int, kind: str, model: str | None, max_tokens: int, timeout: float) -> tuple[str, float, str | None]:
    """(kind, seconds, error or None) of one request on a fresh connection."""
    t0 = time.perf_counter()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        if kind == "chat":
            body = json.dumps({"model": model, "messages": CHAT, "max_tokens": max_tokens})
            conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
        else:
            conn.request("GET", "/" if kind == "site" else "/api/health")
        r = conn.getresponse()
        r.read()
        conn.close()
        error = None if r.status == 200 else f"HTTP {r.status}"
    except OSError as e:
        error = f"{type(e).__name__}: {e}"
    return kind, time.perf_counter() - t0, error


def kinds(n: int, chat_share: float, with_model: bool) -> list[str]:
    """``n`` request kinds, interleaved: chat at ``chat_share`` (with a model), the rest site and health."""
    chat_every = round(1 / chat_share) if with_model and chat_share > 0 else 0
    return ["chat" if chat_every and i % chat_every == 0 else ("site" if i % 2 else "health") for i in range(n)]


def stats(rows: list[tuple[str, float, str | None]]) -> dict:
    lat = np.array([s for _, s, _ in rows])
    return {"requests": len(rows), "errors": sum(e is not None for _, _, e in rows),
            "p50_s": round(float(np.percentile(lat, 50)), 4), "p95_s": round(float(np.percentile(lat, 95)), 4),
            "max_s": round(float(lat.max()), 4)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-model", action="store_true", help="no model: the site and health only")
    ap.add_argument("--adapter", type=Path, default=None, help="the student's adapter (runs/<run>)")
    ap.add_argument("--clients", type=int, default=200, help="concurrent client threads")
    ap.add_argument("--requests", type=int, default=600, help="requests in all")
    ap.add_argument("--idle", type=int, default=300, help="idle connections held open during the test")
    ap.add_argument("--chat-share", type=float, default=0.1, help="share of requests that are chat completions")
    ap.add_argument("--max-tokens", type=int, default=8)
    ap.add_argument("--deadline", type=float, default=300.0, help="seconds before the test stops sending")
    ap.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    args = ap.parse_args(argv)
    if not (1 <= args.clients <= 1000 and 1 <= args.requests <= 100_000 and 0 <= args.idle <= 2000):
        ap.error("--clients 1..1000, --requests 1..100000, --idle 0..2000")
    models = []
    if not args.no_model:
        profile, _ = stage_config(load_params(PARAMS), "models", ModelsConfig)
        models = [(profile.student, profile.student_generation, args.adapter)]
    app = load_app(model_store(), models, site=SITE, data=DATA / "tasks", gen=GenConfig(max_new_tokens=args.max_tokens),
                   quiet=True)
    server, _ = serve_in_thread(app, 0)
    port = server.server_address[1]
    idle = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(args.idle)]
    todo = kinds(args.requests, args.chat_share, bool(models))
    stop_at = time.monotonic() + args.deadline
    t0 = time.perf_counter()
    try:
        with cf.ThreadPoolExecutor(args.clients) as pool:
            futures = [pool.submit(lambda k=k: one(port, k, app.model, args.max_tokens, 120.0)
                                   if time.monotonic() < stop_at else (k, 0.0, "not sent: deadline")) for k in todo]
            rows = [f.result() for f in futures]
    finally:
        wall = time.perf_counter() - t0
        for s in idle:
            s.close()
        server.shutdown()
        server.server_close()
    report = {"clients": args.clients, "idle_connections": args.idle, "wall_s": round(wall, 2),
              "all": stats(rows), **{k: stats([r for r in rows if r[0] == k]) for k in ("site", "health", "chat")
                                     if any(r[0] == k for r in rows)},
              "error_examples": sorted({e for _, _, e in rows if e})[:5]}
    print(f"load_test: {args.requests} requests from {args.clients} clients with {args.idle} idle connections "
          f"held open; {wall:.1f} s")
    for k in ("site", "health", "chat", "all"):
        if k in report:
            s = report[k]
            print(f"  {k:6s} {s['requests']:5d} requests, {s['errors']} errors; latency p50 {s['p50_s']:.3f} s, "
                  f"p95 {s['p95_s']:.3f} s, max {s['max_s']:.3f} s")
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n")
    return 0 if report["all"]["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
