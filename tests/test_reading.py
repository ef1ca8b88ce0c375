"""ccl.judge.reading: the normal form an answer is judged in, with hand-worked cases for each thing
it undoes, and a property: it never raises and is a fixed point (reading the normal form again
changes nothing)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccl.judge.reading import read


@pytest.mark.parametrize("text, expected, undone", [
    ("It is sixteen degrees in Oslo.", "It is 16 degrees in Oslo.", ("number_words",)),
    ("It is forty-two°C.", "It is 42°C.", ("number_words",)),
    ("one hundred and five dollars", "105 dollars", ("number_words",)),
    ("two hundred dollars", "200 dollars", ("number_words",)),
    ("one hundred", "100", ("number_words",)),
    ("three hundred and forty-two", "342", ("number_words",)),
    ("a hundred euros", "100 euros", ("number_words",)),
    ("the cheapest one", "the cheapest one", ()),  # a pronoun, not a number
    ("three four", "three four", ()),  # two numbers, not one
    ("It is 3 degrees below zero.", "It is -3 degrees.", ("below_zero",)),
    ("It is seven degrees below zero.", "It is -7 degrees.", ("number_words", "below_zero")),
    ("Meeting at 3:05 PM and 12:30 a.m. Bring slides.", "Meeting at 15:05 and 00:30. Bring slides.", ("clock",)),
    ("at 7 am tomorrow", "at 07:00 tomorrow", ("clock",)),
    ("It is n\u200bot the case", "It is not the case", ("invisible",)),
    ("Pr\u043ebably.", "Probably.", ("lookalike",)),
    ("\uff0d4\u00b0C", "-4\u00b0C", ()),  # full-width minus: NFKC already
    ("\u22124 \u00b0C", "-4 \u00b0C", ("minus",)),
    ("\u2103", "\u00b0C", ()),  # the degree-Celsius sign is two characters after NFKC
    ("Order ORD-12 is shipped.", "Order ORD-12 is shipped.", ()),
])
def test_what_reading_undoes(text, expected, undone):
    r = read(text)
    assert (r.text, r.undone) == (expected, undone)


def test_letters_of_other_scripts_are_reported():
    assert read("Vielleicht.").scripts == frozenset()
    # a Cyrillic phrase keeps letters with no Latin twin
    assert read("\u0412\u0441\u0451 \u0445\u043e\u0440\u043e\u0448\u043e").scripts == {"CYRILLIC"}
    assert read("\u5929\u6c14\u5f88\u597d").scripts == {"CJK"}
    assert read("S\u00e3o Paulo").scripts == frozenset()  # Latin with accents is Latin


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_reading_never_raises_and_is_a_fixed_point(text):
    once = read(text).text
    assert read(once).text == once
