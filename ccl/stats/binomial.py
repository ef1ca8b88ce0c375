"""A binomial rate's interval, for tables that report one configuration's rate on its own
(adapter cards, serving): Wilson's score interval, as statsmodels computes it."""
from __future__ import annotations

from statsmodels.stats.proportion import proportion_confint


def wilson(k: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """The (1 - ``alpha``) Wilson interval of ``k`` successes in ``n`` trials (n > 0)."""
    if not 0 <= k <= n or n <= 0:
        raise ValueError(f"wilson: need 0 <= k <= n and n > 0, got k={k}, n={n}")
    lo, hi = proportion_confint(k, n, alpha=alpha, method="wilson")
    return float(lo), float(hi)
