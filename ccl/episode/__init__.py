"""Episodes: the one episode loop (``runtime``), the prompt it shows, the chat rendering, the
oracle that drives episodes from the gold graph, batched rollouts and evaluation runs.

A driver's state between turns (the oracle's progress, a model's KV cache and token counts)
lives in the driver's own per-episode memory, which the loops hand back to it; the world's
``Episode`` holds only what the record needs.

Layer: episode. May import world and the layers below it.
"""
