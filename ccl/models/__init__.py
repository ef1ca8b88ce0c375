"""Model registry, weight resolution and the conversion cache (one loader for every source).

Also adapter folders: Hub-ready cards, PEFT <-> mlx-lm conversion, a retrained adapter checked
against the published one.

Layer: models. May import artifacts, stats and the base modules.
"""
