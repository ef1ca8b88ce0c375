"""Judging: the executable success checks (``validate``), reading answers, matching calls to the
gold graph, competing values from a task's world, the post-hoc transcript audit, and re-scoring
stored transcripts (``judging``).

Layer: judge. May import policy, episode, world and the layers below; never data, training or
serving (teacher acceptance, which judges demonstrations, lives in ``ccl.data``).
"""
