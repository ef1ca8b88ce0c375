"""Policies that drive episodes: model backends (torch, MLX) behind one interface."""
