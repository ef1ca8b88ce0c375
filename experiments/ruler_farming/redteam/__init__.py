"""The red team's cases and paraphrase sets: experiment data, outside the library's import path.

No stage and no module of ``ccl`` imports this package (``tests/test_redteam_location.py``); only
``scripts/redteam.py``, ``scripts/redteam_round3.py`` and the tests do. A ruler must not be able to
read the attacks it is measured by.
"""
