"""Supervised LoRA training (torch/peft and MLX): the recipe, sequence packing, the shared-head
cache, the stability rule and one run's record.

Layer: train. May import data, replay, judge, policy, episode, world and the layers below; in
practice it needs only the chat rendering and the prompt head (tests/test_dvc_deps.py keeps the
validator, the runtime and the policies out of training's closure, so they never retrain it).
"""
