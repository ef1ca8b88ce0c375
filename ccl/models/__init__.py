"""Model registry, weight resolution and the conversion cache (one loader for every source)."""
