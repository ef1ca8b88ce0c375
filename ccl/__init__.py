"""ccl: cheap LoRA training of small models as tool orchestrators.

The library never reads argv or chooses paths; the thin entry points in
``scripts/`` do that.
"""
