"""Learning from the student's own behaviour (room for the learning issues: DAgger with an expert
that acts from any state, preference pairs, GRPO against verifiable rewards). Empty for now: every
trained configuration so far is supervised fine-tuning on expert trajectories (``ccl.train``).

Layer: learn. May import train, data, replay, judge, policy, episode, world and the layers below.
"""
