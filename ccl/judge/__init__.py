"""Judging, in three rulers and what they share.

- Ruler 1 (frozen; its verdicts are the published results of study 1): ``validate``, with its word
  lists in ``answers``.
- Ruler 2 (issue 37; study 2's primary outcome): ``ruler2``, its structural table ``criteria`` and
  ``recovery``, its answer judge ``statements`` with ``lexicon``, ``structure``, ``actions``, ``slots``
  and the post-hoc ``audit_checks``.
- Ruler 3 (issue 57; what rewards read): the subpackage ``ruler3``, which imports neither of the others.
- Shared: ``reading``, ``canonical``, ``sources``, ``matching``, ``assignment`` (the one matching of
  calls to gold per episode), ``outcomes``, ``effects``, ``fact_checks``, ``task_facts``, ``codes``
  (reason codes, criteria, weights), ``shape``, ``linear``; ``rulers`` (the rulers a reward reads, by
  name) and ``judging`` (verdict rows and metrics for stored transcripts).

Layer: judge. May import policy, episode, world and the layers below; never data, training or
serving (teacher acceptance, which judges demonstrations, lives in ``ccl.data``). The red team's cases
live outside the library (``experiments/ruler_farming/redteam``).
"""
