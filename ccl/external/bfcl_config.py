"""The BFCL stages' settings (params.yaml ``bfcl``), apart from the harness so that reading them
does not import the benchmark's package."""
from __future__ import annotations

from dataclasses import dataclass

# BFCL v4's non-live single-turn categories in Python (its "simple" is simple_python here; the Java and
# JavaScript variants ask for calls written in those languages, which this project's action format has no
# place for).
CATEGORIES: tuple[str, ...] = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance")


@dataclass(frozen=True)
class BfclConfig:
    """Which BFCL questions every configuration answers, and how it decodes; defaults are the paper
    profile's (every question of every category)."""

    categories: tuple[str, ...] = CATEGORIES
    per_category: int | None = None  # questions drawn from each category; None: all of them
    seed: int = 0  # the draw's seed: the same questions for every configuration
    batch_size: int = 32
    max_new_tokens: int = 256  # a parallel answer holds up to 8 calls

    def __post_init__(self) -> None:
        unknown = sorted(set(self.categories) - set(CATEGORIES))
        if unknown:
            raise ValueError(f"categories {unknown} are not supported; valid: {list(CATEGORIES)}")
        if not self.categories:
            raise ValueError("categories must name at least one category")
        if self.per_category is not None and self.per_category < 1:
            raise ValueError(f"per_category must be at least 1 or null, got {self.per_category}")
        if self.batch_size < 1 or self.max_new_tokens < 1:
            raise ValueError("batch_size and max_new_tokens must be at least 1")
