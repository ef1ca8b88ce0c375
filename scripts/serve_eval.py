"""Stage serve_eval: a trained student, the teacher and the fallback chain served through the
OpenAI-compatible server, measured on an evaluation split by a tool-using client.

    python -m scripts.serve_eval --run C_s0      # runs/C_s0 + the profile's teacher -> results/serve/

For each setup (the student with the run's adapter alone, the teacher alone, and model "chain": the
student, falling back to the teacher on a malformed action, a context overflow, a timeout or an error)
every task of params ``serve_eval`` runs as an episode through the server on 127.0.0.1: strict and
write-up success, fallback rate and reasons, latency (server generation seconds per request, the
cost) and tokens per request. Writes results/serve/summary.json, episodes.jsonl.gz, requests.jsonl.gz.
"""
from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path

from tqdm import tqdm

from ccl.artifacts.boundary import run_stage
from ccl.artifacts.inputs import split_rows
from ccl.config import stage_with_models
from ccl.serve.app import load_app
from ccl.serve.evaluation import SETUPS, ServeEvalConfig, measure, write

from .cli import stage_parser
from .layout import RESULTS, TRAIN_RUNS
from .model_store import model_store


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__)
    ap.add_argument("--run", required=True, help="the trained run whose adapter the student serves (runs/<run>)")
    ap.add_argument("--runs", type=Path, default=TRAIN_RUNS)
    ap.add_argument("--out", type=Path, default=RESULTS / "serve")
    args = ap.parse_args(argv)
    cfg, models, profile = stage_with_models(args.params, "serve_eval", ServeEvalConfig, args.profile)
    tasks = split_rows(args.data / "tasks", cfg.split)[: cfg.max_tasks]
    adapter = args.runs / args.run
    app = load_app(model_store(), [(models.student, models.student_generation, adapter),
                                   (models.teacher, models.teacher_backend, None)], chain=True,
                   site=args.out / "no-site", data=args.data / "tasks", request_timeout_s=cfg.request_timeout_s,
                   quiet=True)
    print(f"serve_eval: {len(tasks)} tasks of {cfg.split}; {', '.join(app.names())}")
    with tqdm(total=len(tasks) * len(SETUPS), unit="ep") as bar:
        summary, episodes, requests = measure(app, tasks, cfg, lambda setup, n: bar.update(1))
    write(args.out, summary, episodes, requests,
          {"profile": profile, "run": args.run, "split": cfg.split, "tasks": len(tasks), "config": asdict(cfg)})
    for setup, row in summary.items():
        print(f"  {setup}: strict success {row['success']['k']}/{row['success']['n']}, fallback rate "
              f"{row['fallback_rate']:.2f}, {row['mean_latency_s']:.2f} s and "
              f"{row['completion_tokens_per_request']:.0f} generated tokens per request")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("serve_eval", main))
