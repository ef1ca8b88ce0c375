"""What evaluation runs: the splits, how many tasks of each, decoding limits and the replay subset.

Kept apart from :mod:`ccl.episode.evaluation` (which runs episodes) so that a stage that only needs to
know the evaluated tasks (build_replay, power) does not depend on the episode machinery.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EvaluateConfig:
    """What to evaluate and how; defaults are the paper profile's."""

    splits: tuple[str, ...] = ("eval_id", "eval_ood", "eval_unseen", "eval_renamed", "eval_catalog_0",
                               "eval_catalog_5", "eval_catalog_12")
    # The first n tasks of each split: one n for every split, a mapping split -> n (a split it
    # does not name runs whole), or None for every task in the split files.
    max_tasks_per_split: int | dict[str, int] | None = None
    batch_size: int = 64  # episodes decoded in lock-step
    max_new_tokens: int = 256  # per assistant turn
    # Decision-point replay (stage build_replay) freezes the decisions of the first n evaluated
    # tasks of each split; None: of every evaluated task.
    replay_tasks_per_split: int | None = None

    def __post_init__(self) -> None:
        caps = self.max_tasks_per_split
        for n in caps.values() if isinstance(caps, dict) else [caps]:
            if n is not None and n < 1:
                raise ValueError(f"max_tasks_per_split must be at least 1, got {n}")
        if isinstance(caps, dict):  # kept as sorted pairs: the config stays hashable and canonical
            unknown = sorted(set(caps) - set(self.splits))
            if unknown:
                raise ValueError(f"max_tasks_per_split names split(s) {unknown} that are not evaluated "
                                 f"(splits: {list(self.splits)})")
            object.__setattr__(self, "max_tasks_per_split", tuple(sorted(caps.items())))
        if self.replay_tasks_per_split is not None and self.replay_tasks_per_split < 1:
            raise ValueError(f"replay_tasks_per_split must be at least 1, got {self.replay_tasks_per_split}")


def task_cap(cfg: EvaluateConfig, split: str) -> int | None:
    """How many tasks of ``split`` evaluation runs (from the start of its file); None: all of them."""
    caps = cfg.max_tasks_per_split
    return dict(caps).get(split) if isinstance(caps, tuple) else caps


def replay_cap(cfg: EvaluateConfig, split: str) -> int | None:
    """How many of ``split``'s evaluated tasks have their decisions replayed; None: all of them."""
    caps = [c for c in (task_cap(cfg, split), cfg.replay_tasks_per_split) if c is not None]
    return min(caps) if caps else None
