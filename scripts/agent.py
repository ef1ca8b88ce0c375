"""Run one episode and print its transcript and verdict.

    python scripts/agent.py --template ch_contact_email --seed 3 --policy oracle [--approve ask]

The last line printed is a JSON verdict with ``success`` and the diagnostics.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ccl.jsonio import dumps  # noqa: E402
from ccl.oracle import OraclePolicy  # noqa: E402
from ccl.runtime import Episode, run_episode, scripted_approver, terminal_approver  # noqa: E402
from ccl.tasks import POOLS, TEMPLATES, TaskError, generate_task  # noqa: E402
from ccl.validate import validate  # noqa: E402

POLICIES = {"oracle": OraclePolicy}


def print_turn(ep: Episode) -> None:
    """Print the messages added since the last call (assistant turn and its results)."""
    start = ep.scratch.get("printed", 2)
    for m in ep.messages[start:]:
        print(f"\n[{m['role']}]\n{m['content']}")
    ep.scratch["printed"] = len(ep.messages)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--template", required=True, help="template name (see --list)")
    ap.add_argument("--seed", required=True, type=int)
    ap.add_argument("--pool", default=None, choices=POOLS,
                    help="entity pool (default: train for training templates, eval otherwise)")
    ap.add_argument("--rename", default=None, choices=["train", "heldout"], help="alias vocabulary")
    ap.add_argument("--policy", default="oracle", choices=sorted(POLICIES))
    ap.add_argument("--approve", default="script", choices=["script", "ask"],
                    help="script: the task's scripted decisions; ask: prompt on the terminal")
    args = ap.parse_args(argv)
    if args.template not in TEMPLATES:
        ap.error(f"unknown template {args.template!r}; valid: {', '.join(sorted(TEMPLATES))}")
    pool = args.pool or ("train" if TEMPLATES[args.template].split == "train" else "eval")
    try:
        task = generate_task(args.template, args.seed, pool=pool, rename=args.rename)
    except TaskError as e:
        ap.error(str(e))
    approver = terminal_approver if args.approve == "ask" else scripted_approver
    print(f"[task {task['id']}] family={task['family']} role={task['role']} "
          f"expected_status={task['expected_status']}")
    print(f"\n[system]\n{Episode(task).messages[0]['content']}\n\n[user]\n{task['request']}")
    ep = run_episode(task, POLICIES[args.policy](), approver=approver, on_turn=print_turn)
    verdict = {"task_id": task["id"], **validate(task, ep.record())}
    print()
    print(dumps(verdict))
    return 0


if __name__ == "__main__":
    sys.exit(main())
