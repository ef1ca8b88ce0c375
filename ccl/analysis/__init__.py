"""Analysis: turn evaluation episodes into the write-up's tables (stage ``analyze``).

Everything here is a pure function of its inputs and ``AnalyzeConfig``: rows are
grouped into one ``ConfigData`` per configuration holding, per split, a ``Matrix``
of (seeds, tasks) outcomes with task ids as column labels; one builder per table
turns those into a JSON-ready dict with ``columns``, ``rows`` and usually a
``note``. Only ``read_run`` touches the file system.

Run names: ``<config>_s<k>`` is seed k of a trained configuration (B, C, Dmix, ...);
any other name is a single-run configuration (A_base, A_fewshot, teacher, oracle).
Every random number comes from a seed derived from the base seed and the cell's
names (``cell_seed``), so a cell's value does not depend on which other
configurations are present.

Modules: ``runs`` (configurations from judged runs), ``intervals`` (one cell and its interval),
``contrasts`` (paired and primary comparisons), ``tables`` (the descriptive tables), ``summary``
(the stage's JSON), ``replay`` (the decision-point replay's analysis).

Layer: analysis. May import learn, train, data, replay, judge and the layers below.
"""
