"""The linear-time action parser gives the old parser's answer (issue 38).

The reference is the parser before issue 38 (scripts/bench_parse.old_parse_action: the decoder tried at
every bracket). The corpus: every assistant text of the committed transcripts, truncations and bracket
injections of them, the adversarial families of the benchmark, and the property tests' text strategy.
No timing here: ``python -m scripts.bench_parse`` prints the worst case."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_properties import any_text, cfg

from ccl.artifacts.jsonio import read_jsonl
from ccl.episode.jsonscan import FAILED, fenced, value_at
from ccl.episode.runtime import parse_action
from scripts.bench_parse import FAMILIES, build, old_parse_action

ROOT = Path(__file__).resolve().parents[1]


def same(text: str) -> None:
    # repr: an action may hold NaN, which is not equal to itself
    assert repr(parse_action(text)) == repr(old_parse_action(text)), text[:200]


@pytest.fixture(scope="module")
def transcript_texts() -> list[str]:
    texts = [t["text"] for f in sorted((ROOT / "results" / "runs").glob("*/episodes.jsonl.gz"))
             for row in read_jsonl(f) for t in row["record"]["turns"]]
    assert len(texts) > 3000
    return texts


def test_committed_transcript_texts_parse_as_before(transcript_texts):
    for text in transcript_texts:
        same(text)


def test_cut_and_bracketed_transcript_texts_parse_as_before(transcript_texts):
    rng = random.Random(38)
    for text in rng.sample(transcript_texts, 1500):
        cut = rng.randint(0, len(text))
        same(text[:cut])
        same(text[cut:])
        insert = rng.choice(['"', "]", "}", "[", "{", '\\"', "```", "```json\n", "<think>", "NaN", ", "])
        same(text[:cut] + insert + text[cut:])


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_adversarial_families_parse_as_before(family):
    for chars in (40, 300, 2500):
        for ratio in (0.25, 0.5, 1.0):
            text = build(family, chars, ratio)
            same(text)
            same(text + '{"final": "ok", "status": "done"}')  # a real action after the noise
            same('{"final": "ok", "status": "done"}' + text)


def test_deep_closed_nesting_past_the_decoders_recursion_budget_parses_as_before():
    # real nesting of ~2,000 levels that the depth guard does not see (its closers sit in strings):
    # the decoder fails on the outer brackets by recursion, the recogniser measures that budget
    text = '{"a":"}","b":' * 1000 + '{"calls": [{"tool": "t", "args": {}}]}' + "}" * 1000
    assert len(text) < 16_000
    with pytest.raises(RecursionError):
        json.loads(text)
    same(text)
    result = parse_action(text)
    assert result[1] == 'expected {"calls": [...]} with at least one call, or {"final": ..., "status": ...}'
    same(build("closers_in_strings_closed", 16_000, 1.0))


def test_property_texts_parse_as_before():
    @cfg(300)
    @given(any_text.filter(lambda s: len(s) < 6000))
    def check(text):
        same(text)

    check()


json_bits = st.lists(st.sampled_from(['[', ']', '{', '}', '"', ',', ':', ' ', '\\', '\\"', '"a"', '1', '-', '0',
                                      '.5', 'e3', 'null', 'true', 'NaN', '-Infinity', 'x', '\n', '\x01', '\\u12']),
                     max_size=40).map("".join)


def test_the_recogniser_never_fails_where_the_decoder_reads_a_value():
    decoder = json.JSONDecoder()

    @cfg(600)
    @given(json_bits)
    def check(text):
        memo: dict = {}
        for i in range(len(text) + 1):
            got = value_at(text, i, memo)
            try:
                _, end = decoder.raw_decode(text, i)
            except ValueError:
                continue  # the recogniser may say either (it must only never refuse a real value)
            assert got != FAILED and got[0] == end, (text, i, got, end)

    check()


@pytest.mark.parametrize("text", ["```json\n{}\n```", "``` \n\n", "```json```", "``````", "a```b```c```d",
                                  "```\u00a0\u2003x```", "```json   x``` ```y", "```jso```"])
def test_fences_match_the_old_regex(text):
    import re
    assert fenced(text) == [m.group(1) for m in re.finditer(r"```(?:json)?\s*(.*?)```", text, re.S)]
