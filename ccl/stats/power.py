"""Power of the paired test on binary outcomes, and the minimum detectable effect of a design.

The study's primary contrasts compare two configurations on the same n tasks. With one
outcome per task and side, the sign-flip test the analysis runs is exactly McNemar's
test: only the discordant tasks (one side succeeds, the other fails) carry information,
and under H0 each falls either way with probability 1/2. Power is computed exactly from
that model:

    D ~ Binomial(n, psi)                    discordant tasks (psi: discordant share)
    K | D ~ Binomial(D, (psi + delta) / (2 psi))   discordant tasks won by side a
    reject when the two-sided exact binomial p of K out of D is <= alpha

with delta = P(a succeeds, b fails) - P(b succeeds, a fails), the difference in success
rates. A configuration averaged over several training seeds has per-task differences in
{-1, -1/2, 0, 1/2, 1}; averaging keeps their mean and cannot increase their variance, so to a
normal approximation the one-seed power computed here is the lower figure for a multi-seed
design (exactly, the discrete tests differ). Either way the test treats the trained adapters
as fixed: its power is over task sampling, not over training seeds.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class Design:
    """One contrast's design: ``n`` paired tasks, tested at ``alpha`` (already corrected)."""

    n: int
    alpha: float
    power: float = 0.8

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError(f"Design.n must be >= 1, got {self.n}")
        if not 0 < self.alpha < 1 or not 0 < self.power < 1:
            raise ValueError(f"Design: alpha and power must lie in (0, 1), got {self.alpha}, {self.power}")


def rejection_counts(d: int, alpha: float) -> np.ndarray:
    """(d + 1,) bool: which counts k of d discordant pairs the exact two-sided test rejects.

    The two-sided p of k is min(1, 2 P(X >= max(k, d - k))) for X ~ Binomial(d, 1/2),
    which is what scipy.stats.binomtest returns for p = 1/2.
    """
    k = np.arange(d + 1)
    tail = stats.binom.sf(np.maximum(k, d - k) - 1, d, 0.5)
    return np.minimum(1.0, 2.0 * tail) <= alpha


def power(n: int, psi: float, delta: float, alpha: float) -> float:
    """Exact power of McNemar's two-sided test on ``n`` tasks (see the module docstring).

    psi: the share of discordant tasks, 0 < psi <= 1; delta: the true difference, |delta| <= psi.
    """
    if not 0 < psi <= 1 or abs(delta) > psi + 1e-12:
        raise ValueError(f"power: need 0 < psi <= 1 and |delta| <= psi, got psi={psi}, delta={delta}")
    win = min(1.0, max(0.0, (psi + delta) / (2 * psi)))
    p_d = stats.binom.pmf(np.arange(n + 1), n, psi)
    total = 0.0
    for d in range(1, n + 1):
        if p_d[d] < 1e-15:
            continue
        reject = rejection_counts(d, alpha)
        if reject.any():
            total += p_d[d] * float(stats.binom.pmf(np.flatnonzero(reject), d, win).sum())
    return total


def mde(design: Design, reverse_share: float, step: float = 0.005) -> float | None:
    """The smallest delta (a multiple of ``step``) the design detects with its power.

    ``reverse_share`` is q, the share of tasks where the comparator succeeds and side a fails;
    a true difference delta then comes with delta + q tasks won by a, so the discordant share
    is psi = delta + 2q. Exact tests have saw-toothed power curves, so this scans upward rather
    than bisecting; None when no delta up to 1 - 2q reaches the target.
    """
    if not 0 <= reverse_share < 0.5:
        raise ValueError(f"mde: reverse_share must lie in [0, 0.5), got {reverse_share}")
    for delta in np.arange(step, 1 - 2 * reverse_share + step / 2, step):
        delta = round(float(delta), 6)
        if power(design.n, min(1.0, delta + 2 * reverse_share), delta, design.alpha) >= design.power:
            return delta
    return None
