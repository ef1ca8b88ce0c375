"""Training data: task splits with leakage control, oracle SFT rows, teacher generation and
acceptance, the SFT variants and their export in the tool-call chat format.

Layer: data. May import replay, judge, policy, episode, world and the layers below.
"""
