"""Model policies that drive episodes: backends (torch, MLX) behind one interface, adapters,
and the one loader for every policy (the oracle included).

Layer: policy. May import episode, world, models and the layers below.
"""
