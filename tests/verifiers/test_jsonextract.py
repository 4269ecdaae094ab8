"""JSON extraction from LLM replies: the damage real replies carry, and linear time."""

from __future__ import annotations

import json
import time

import pytest

from seqk.verifiers.jsonextract import extract_all_json, extract_json, parse_lenient

GRID = [[1, 2], [3, 4]]


@pytest.mark.parametrize(
    "reply",
    [
        "[[1, 2], [3, 4]]",
        "```json\n[[1, 2], [3, 4]]\n```",
        "```\n[[1,2],[3,4]]\n```\nThat is my answer.",
        "The rule mirrors the grid, so the answer is [[1, 2], [3, 4]] as shown.",
        "[[1, 2,], [3, 4,],]",
        "[[1, 2], [3, 4",
        "```json\n[[1, 2], [3, 4\n```\nI ran out of room.",
        "[[1 2]\n [3 4]]",
        "[Answer: [[1, 2], [3, 4]]]",
        "I can't be sure [it's hard].\nFinal: [[1, 2], [3, 4]]",
        "Consider [the border.\nHere's the grid: [[1, 2], [3, 4]]",
        "First guess [[0, 0], [0, 0]], then corrected: [[1, 2], [3, 4]]",
    ],
)
def test_extract_json_repairs_and_takes_the_last_value(reply: str) -> None:
    assert extract_json(reply) == GRID


def test_python_literals_and_single_quotes() -> None:
    reply = "{'ok': True, 'missing': None, 'bad': False, 'say': 'it\\'s \"fine\"'}"
    assert extract_json(reply) == {"ok": True, "missing": None, "bad": False,
                                   "say": 'it\'s "fine"'}


def test_string_escapes_are_made_valid() -> None:
    reply = r"""['C:\\', 'it\'s', 'tab\t', '\alpha', "x\beta"]"""
    assert extract_json(reply) == ["C:\\", "it's", "tab\t", "\\alpha", "x\beta"]
    assert extract_json('{"a": "cut off\\') == {"a": "cut off"}


def test_truncated_object_drops_the_dangling_key() -> None:
    assert extract_json('{"a": 1, "b": [1, 2], "c": ') == {"a": 1, "b": [1, 2]}
    assert extract_json('{"a": 1, "b"') == {"a": 1}
    assert extract_json('["abc", "de') == ["abc", "de"]


def test_every_value_in_order() -> None:
    reply = 'Try {"x": 1} first.\n```json\n[1, 2]\n```\nthen [3]'
    assert extract_all_json(reply) == [{"x": 1}, [1, 2], [3]]


def test_accept_skips_trailing_prose_values() -> None:
    reply = "```json\n[[1, 2], [3, 4]]\n```\nThe grid has [2] rows."
    assert extract_json(reply) == [2]
    assert extract_json(reply, accept=lambda v: isinstance(v[0], list)) == GRID


def test_nothing_parseable_raises_a_clear_value_error() -> None:
    with pytest.raises(ValueError, match="no JSON array or object"):
        extract_json("I do not know the answer.")
    with pytest.raises(ValueError, match="expected form"):
        extract_json("[1] and [2]", accept=lambda v: False)


def test_brackets_in_strings_do_not_confuse_the_scan() -> None:
    assert extract_json('{"note": "a ] and a {", "grid": [[1]]}') == {
        "note": "a ] and a {", "grid": [[1]]}


def test_parse_lenient_rejects_prose() -> None:
    assert parse_lenient("[True, None,]") == [True, None]
    with pytest.raises(ValueError, match="not JSON"):
        parse_lenient("[see the note]")


@pytest.mark.parametrize(
    "text",
    [
        "[" * 50_000,
        "[x] " * 12_500,
        "[" * 25_000 + "x" + "]" * 25_000,
        "[" + "'a\n" * 16_000,
        "[" + "\\'" * 25_000,
        "[}" * 25_000,
        ("[x " * 10 + "[1]" + "]" * 10) * 1_200,
    ],
    ids=["open", "failing", "deep", "apostrophes", "escapes", "mismatched", "nested"],
)
def test_pathological_50kb_replies_stay_fast(text: str) -> None:
    # A guard against quadratic or backtracking scans (minutes on these inputs), not a speed
    # target (bench/ measures those): 0.02-0.27 s here, with room for a loaded machine.
    start = time.perf_counter()
    extract_all_json(text)
    assert time.perf_counter() - start < 10.0


def test_large_valid_reply_is_fast() -> None:
    grids = [[[(r + c) % 10 for c in range(30)] for r in range(30)]] * 3
    reply = "Reasoning... " * 2_000 + "```json\n" + json.dumps(grids) + "\n```"
    # As above, a guard against a scan that re-reads the reply per bracket: 0.2 ms here.
    start = time.perf_counter()
    assert extract_json(reply) == grids
    assert time.perf_counter() - start < 2.0
