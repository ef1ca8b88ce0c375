"""The rulers a reward can read, by name (``ccl.vocabulary.RULERS``): ruler 2 (issue 37; the published
GRPO, DAgger and error-round runs were judged by it) and ruler 3 (issue 57; what rewards read from now
on). Ruler 1, the pre-registered validator, is no reward: it has no criteria to decompose."""
from __future__ import annotations

from typing import Callable

from ..records import EpisodeRecord, Task
from ..vocabulary import RULER2, RULER3
from . import ruler2, ruler3

Judge = Callable[[Task, EpisodeRecord], dict]
JUDGES: dict[str, Judge] = {RULER2: ruler2.judge, RULER3: ruler3.judge}
REWARD_RULERS = tuple(JUDGES)


def judge_by(ruler: str) -> Judge:
    """The judge of ``ruler``; an unknown name is refused with the valid ones."""
    if ruler not in JUDGES:
        raise ValueError(f"ruler {ruler!r}: a reward reads one of {', '.join(REWARD_RULERS)}")
    return JUDGES[ruler]
