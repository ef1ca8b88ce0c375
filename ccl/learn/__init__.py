"""Learning from the student's own behaviour (issue 40 and after): the reward API (``reward``), an
expert that acts from any state (``expert``), scripted deviations and the expert's reach from them
(``deviations``, ``coverage``), DAgger's rollouts and rows (``dagger``) and the error-driven round
(``errors``).

Layer: learn. May import train, data, replay, judge, policy, episode, world and the layers below.
"""
