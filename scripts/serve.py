"""Serve the report site, an OpenAI-compatible chat endpoint (tools, streaming, a fallback chain) and live
episodes on 127.0.0.1.

    python -m scripts.serve --port 8765                        # the profile's student on its backend
    python -m scripts.serve --port 8765 --adapter runs/C_s0     # a trained run's adapter
    python -m scripts.serve --adapter runs/C_s0 --fallback teacher   # + the teacher, and model "chain"
    python -m scripts.serve --port 8765 --no-model              # site, task lists, oracle episodes

Then open http://127.0.0.1:8765/ (the site in web/public, built by `dvc repro export_web`), or point
an OpenAI client at http://127.0.0.1:8765/v1 (``tools=`` gives ``tool_calls``; ``stream=True`` works).
With --fallback, model "chain" tries the student first and falls back to the second model on a
malformed action, a context overflow, a timeout or an error. Endpoints: GET /v1/models,
POST /v1/chat/completions, GET /api/health, GET /api/tasks?split=eval_id, GET /api/requests,
POST /api/episode (newline-delimited JSON events); see ccl/serve/app.py. The server never listens
beyond this machine.
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.config import ConfigError, ModelsConfig, load_params, stage_config
from ccl.models.registry import ModelError
from ccl.policy.base import GenConfig
from ccl.policy.load import BACKENDS
from ccl.serve.app import HOST, MAX_TOKENS_CAP, load_app
from ccl.serve.http import make_server

from .cli import stage_parser
from .layout import SITE
from .model_store import model_store


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__)
    ap.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (0: any free port)")
    ap.add_argument("--model", default=None, help="registered model to serve (default: the profile's student)")
    ap.add_argument("--backend", default=None, choices=BACKENDS,
                    help="default: the profile's student backend for the default model, else torch")
    ap.add_argument("--adapter", type=Path, default=None, help="LoRA adapter folder or run folder (runs/<run>)")
    ap.add_argument("--fallback", default=None,
                    help="a second model (a registered name, or 'teacher': the profile's teacher on its backend); "
                         "serves model 'chain' as well")
    ap.add_argument("--model-path", default=None, help="local copy of a hub model")
    ap.add_argument("--no-model", action="store_true", help="serve the site and tasks only (oracle episodes)")
    ap.add_argument("--site", type=Path, default=SITE)
    ap.add_argument("--max-body", type=int, default=1 << 20, help="largest request body in bytes")
    ap.add_argument("--max-tokens", type=int, default=GenConfig().max_new_tokens,
                    help="tokens per completion or assistant turn when a request names none")
    ap.add_argument("--request-timeout", type=float, default=120.0,
                    help="seconds of generation per request (per provider in the chain; per episode turn)")
    ap.add_argument("--quiet", action="store_true", help="no tracebacks of internal errors (GET /api/requests keeps "
                                                            "the request records either way)")
    args = ap.parse_args(argv)
    if not 0 <= args.port <= 65535:
        ap.error(f"--port {args.port}: must be 0 to 65535")
    if args.max_body < 1:
        ap.error("--max-body must be positive")
    if not 1 <= args.max_tokens <= MAX_TOKENS_CAP:
        ap.error(f"--max-tokens must be 1 to {MAX_TOKENS_CAP}")
    if not args.request_timeout > 0:
        ap.error("--request-timeout must be positive")
    if args.model == "oracle":
        ap.error("--model oracle: the oracle is always available to /api/episode; use --no-model to serve no model")
    if args.no_model and (args.model or args.adapter or args.fallback):
        ap.error("--no-model takes no --model, --adapter or --fallback")
    models: list = []
    if not args.no_model:
        try:
            profile, _ = stage_config(load_params(args.params), "models", ModelsConfig, args.profile,
                                      where=str(args.params))
        except ConfigError as e:
            ap.error(str(e))
        default = args.model is None
        models.append((args.model or profile.student,
                       args.backend or (profile.student_generation if default else "torch"), args.adapter))
        if args.fallback == "teacher":
            models.append((profile.teacher, profile.teacher_backend, None))
        elif args.fallback:
            models.append((args.fallback, "torch", None))
    try:
        app = load_app(model_store(), models, chain=args.fallback is not None, model_path=args.model_path,
                       site=args.site, data=args.data / "tasks", max_body=args.max_body,
                       gen=GenConfig(max_new_tokens=args.max_tokens), request_timeout_s=args.request_timeout,
                       quiet=args.quiet)
    except ModelError as e:
        print(f"serve: {e}", file=sys.stderr)
        return 2
    try:
        server = make_server(app, args.port)
    except OSError as e:
        print(f"serve: cannot listen on {HOST}:{args.port}: {e}", file=sys.stderr)
        return 2
    port = server.server_address[1]
    what = ", ".join(app.names()) or "no model"
    print(f"serve: http://{HOST}:{port}/ ({what}); OpenAI base_url http://{HOST}:{port}/v1", flush=True)
    if not args.site.is_dir():
        print(f"serve: {args.site} does not exist yet; build it with `dvc repro export_web`", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
