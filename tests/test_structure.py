"""ccl.judge.structure: a tool result handed back is refused in every wrapping, prose is not.
Hand-worked on one weather task (Prague, -4°C, sunny) and one parallel orders task."""
from __future__ import annotations

import pytest

from experiments.ruler_farming.redteam import base as R
from experiments.ruler_farming.redteam import cases as C
from ccl.judge.structure import result_keys, structure_reasons
from ccl.world.tasks import generate_task

WEATHER = generate_task("sel_weather", 1)
RECORD = R.play(WEATHER, R.oracle_turns(WEATHER))


def test_the_keys_are_every_observed_results_keys():
    assert result_keys(RECORD) == {"city", "temperature_c", "condition", "humidity_pct", "source"}


@pytest.mark.parametrize("answer, reasons", [
    ('{"city": "Prague", "temperature_c": -4}', ["result_key", "object_syntax"]),
    ("{'city': 'Prague', 'temperature_c': -4}", ["result_key", "object_syntax"]),
    ("```json\n[\n  {\n    \"city\": \"Prague\"\n  }\n]\n```", ["object_syntax"]),
    ("city: Prague\ncondition: sunny", ["result_key"]),
    ("Status: sunny.", []),  # one label is prose
    ("I used the 'city' you gave me: Prague, -4°C and sunny.", []),  # a quoted word, not a key
    ("Here you go: temperature_c -4, condition sunny.", ["result_key"]),
    ("city = Prague, condition = sunny", ["result_key"]),
    ('Results:\n{"ok":true}', ["object_syntax", "observation_framing"]),
    ("Prague: -4°C and sunny.", []),  # an entity before a colon is prose
    ("In Prague it is -4°C and sunny.", []),
    ("The city is Prague; the condition there is sunny, at -4°C.", []),  # the words, not as keys
    ("| city | temperature |\n| --- | --- |\n| Prague | -4°C |", []),  # a table
    ("It is 15:05 in Prague.", []),
])
def test_what_counts_as_structure(answer, reasons):
    assert structure_reasons(answer, RECORD) == reasons


def test_look_alike_letters_do_not_hide_a_key():
    assert structure_reasons("\u0441ity: Prague, condition: sunny", RECORD) == ["result_key"]  # a Cyrillic c


def test_the_oracle_and_every_paraphrase_pass_and_every_paste_is_refused():
    tasks = [generate_task(name, 1) for name in ("sel_weather", "par_orders", "ch_order_fx", "sel_fx",
                                                  "appr_email_denied", "rec_order_missing", "sel_calc")]
    judge = lambda task, record: not structure_reasons(record["final"] or "", record)  # noqa: E731
    farmed = R.farm(tasks, judge, C.EXPLOITS + C.PARAPHRASE_CASES)
    assert farmed["oracle"]["passed"] == len(tasks)
    # the wrappings this module was written against (the red team's later ones and its probes are the
    # whole ruler's to refuse: tests/test_redteam_suite.py)
    tuned = {"paste_json", "paste_fenced", "paste_python_dict", "paste_key_value", "paste_with_preamble"}
    for name, cell in farmed.items():
        if name in tuned:
            assert cell["applied"] > 0 and cell["passed"] == 0, name
        elif cell["kind"] == "paraphrase":
            assert cell["passed"] == cell["applied"], name
