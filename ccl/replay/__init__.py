"""Decision-point replay: the golden decisions of the oracle's episodes, live prefixes replayed
through the runtime, one action per decision, and its grading.

Layer: replay. May import judge, policy, episode, world and the layers below.
"""
