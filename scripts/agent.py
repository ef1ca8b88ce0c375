"""Run one episode and print its transcript and verdict.

    python -m scripts.agent --list
    python -m scripts.agent --template ch_contact_email --seed 3 --policy oracle [--approve ask]
    python -m scripts.agent --template sel_fx --seed 1 --policy smollm2-135m-instruct [--adapter DIR]

The last line printed is a JSON verdict with ``success`` and the diagnostics. The validator scores
against the task's scripted approval decisions: with ``--approve ask``, an episode in which your
answers differ from them is reported unscored (``success`` null), not failed.
"""
from __future__ import annotations

import argparse
import sys

from ccl.artifacts.jsonio import dumps
from ccl.episode.prompt import system_prompt
from ccl.episode.runtime import Episode, fresh_memory, scripted_approver, terminal_approver
from ccl.judge.validate import validate
from ccl.models.registry import ModelError
from ccl.policy.load import BACKENDS, load_policy
from ccl.world.tasks import POOLS, TEMPLATES, TaskError, generate_task

from .model_store import model_store


def print_turn(ep: Episode, shown: int) -> int:
    """Print the messages after the first ``shown`` (the last assistant turn and its results);
    returns how many are shown now."""
    for m in ep.messages[shown:]:
        print(f"\n[{m['role']}]\n{m['content']}")
    return len(ep.messages)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", action="store_true", help="print the templates by family and exit")
    ap.add_argument("--template", help="template name (see --list)")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--pool", default=None, choices=POOLS,
                    help="entity pool (default: train for training templates, eval otherwise)")
    ap.add_argument("--rename", default=None, choices=["train", "heldout"], help="alias vocabulary")
    ap.add_argument("--policy", default="oracle", help="oracle, or a registered model name "
                    f"({', '.join(sorted(model_store().specs()))})")
    ap.add_argument("--adapter", default=None, help="LoRA adapter folder (model policies)")
    ap.add_argument("--backend", default="torch", choices=BACKENDS)
    ap.add_argument("--fewshot", action="store_true", help="append the two worked examples (A+)")
    ap.add_argument("--approve", default="script", choices=["script", "ask"],
                    help="script: the task's scripted decisions; ask: prompt on the terminal")
    ap.add_argument("--show-system", action="store_true", help="print the system prompt (tools and rules)")
    args = ap.parse_args(argv)
    if args.list:
        for name in sorted(TEMPLATES):
            print(f"{name}  ({TEMPLATES[name].family}, {TEMPLATES[name].split} split)")
        return 0
    if args.template is None or args.seed is None:
        ap.error("--template and --seed are required (templates: --list)")
    if args.template not in TEMPLATES:
        ap.error(f"unknown template {args.template!r}; valid: {', '.join(sorted(TEMPLATES))}")
    pool = args.pool or ("train" if TEMPLATES[args.template].split == "train" else "eval")
    try:
        task = generate_task(args.template, args.seed, pool=pool, rename=args.rename)
    except TaskError as e:
        ap.error(str(e))
    answers: list[tuple[str, bool, bool]] = []  # tool, the person's answer, the script's

    def asked(task, tool, call_args):
        said = terminal_approver(task, tool, call_args)
        answers.append((tool, said, scripted_approver(task, tool, call_args)))
        return said

    approver = asked if args.approve == "ask" else scripted_approver
    try:
        policy = load_policy(model_store(), args.policy, args.backend, args.adapter)
    except ModelError as e:
        ap.error(str(e))
    print(f"[task {task['id']}] family={task['family']} role={task['role']} "
          f"expected_status={task['expected_status']}")
    system = system_prompt(task, fewshot=args.fewshot)
    if args.show_system:
        print(f"\n[system]\n{system}")
    else:
        print(f"\n[system] {len(system.splitlines())} lines: the tools and rules (--show-system prints them)")
    print(f"\n[user]\n{task['request']}")
    ep, memory = Episode(task, approver, system=system), fresh_memory(policy)
    shown = 2  # the system prompt and the request are already shown
    while not ep.done:
        ep.step(policy.act(ep, memory))
        shown = print_turn(ep, shown)
    verdict = {"task_id": task["id"], **validate(task, ep.record())}
    differ = [f"{tool}: you {'approved' if said else 'denied'}, the script {'approves' if script else 'denies'}"
              for tool, said, script in answers if said != script]
    if differ:
        verdict = {**verdict, "success": None, "scored": False,
                   "note": f"unscored: your approval answers differ from the task's scripted decisions "
                           f"({'; '.join(differ)}), and the validator scores against the script"}
    print()
    print(dumps(verdict))
    return 0


if __name__ == "__main__":
    sys.exit(main())
