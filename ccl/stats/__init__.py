"""Seeded, vectorised statistics for the study: bootstrap CIs, paired tests, Holm, pass^k, and
their task-clustered forms for units nested in tasks (replay decisions).

Outcome arrays are (seeds, tasks); every random function takes an explicit ``seed``
and uses only local generators, so equal inputs and seed give identical floats.

Layer: stats. Imports nothing of the project but itself (numpy and scipy only).
"""
from .binomial import wilson
from .bootstrap import Interval, hierarchical_bootstrap, task_bootstrap
from .clustered import cluster_correlation, cluster_paired_difference, cluster_rate
from .multiple import holm
from .paired import PairedResult, paired_difference, sign_flip_exact, sign_flip_lattice, sign_flip_p
from .rank import spearman_permutation
from .reliability import pass_hat_k

__all__ = [
    "Interval",
    "PairedResult",
    "cluster_correlation",
    "cluster_paired_difference",
    "cluster_rate",
    "hierarchical_bootstrap",
    "holm",
    "paired_difference",
    "pass_hat_k",
    "sign_flip_exact",
    "sign_flip_lattice",
    "sign_flip_p",
    "spearman_permutation",
    "task_bootstrap",
    "wilson",
]
