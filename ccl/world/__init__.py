"""The world the student acts in: the typed tools and their registry, the world's state, the
tool catalogue a task offers (with its surface names), the naming vocabularies and the task
templates (``ccl.world.tasks``).

Layer: world. May import the base modules (records, vocabulary, errors, config), stats, artifacts and models;
never episodes, policies, judging or anything above (tests/test_layers.py).
"""
