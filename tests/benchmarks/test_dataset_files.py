"""benchmark: dataset reads files as users have them: U+2028 and the other characters
str.splitlines() breaks at inside JSON strings, byte-order marks, CRLF, line breaks inside CSV
cells, Unicode, blank lines, a last line without a newline. A row that cannot be read is named by
file, line (and column) and shifts no other row; a field that is not there names the fields the
file has."""

from __future__ import annotations

import json
import logging

import polars as pl
import pytest

from benchmarks.dataset import benchmark
from seqk.errors import ConfigError, DataFileError

BREAKERS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
"""What str.splitlines() breaks at besides \\n and \\r, all of which a JSON string may hold raw."""


def options(path, **more):
    return benchmark.Options.model_validate({"path": str(path), "input": "question", "target": "answer",
                                             "scorer": "exact"} | more)


def load(path, **more):
    return benchmark.load_tasks(options(path, **more))


def test_jsonl_rows_split_at_newline_only_and_keep_their_numbers(tmp_path):
    rows = [{"question": f"q{i} before{ch}after", "answer": f"a{i}"} for i, ch in enumerate(BREAKERS)]
    text = "\ufeff" + "\r\n".join(json.dumps(r, ensure_ascii=False) for r in rows[:3]) + "\r\n\n   \n"
    text += "\n".join(json.dumps(r, ensure_ascii=False) for r in rows[3:])  # the last line has no newline
    path = tmp_path / "nasty.jsonl"
    path.write_text(text, encoding="utf-8")
    tasks = load(path)
    assert [t.task_index for t in tasks] == list(range(1, len(BREAKERS) + 1))
    assert [t.prompt for t in tasks] == [r["question"] for r in rows]
    assert [t.answer["target"] for t in tasks] == [[r["answer"]] for r in rows]
    assert [t.meta["line"] for t in tasks] == [1, 2, 3, 6, 7, 8, 9, 10]


def test_csv_with_bom_crlf_line_breaks_in_cells_and_unicode(tmp_path):
    path = tmp_path / "nasty.csv"
    path.write_bytes("\ufeffid,question,answer\r\n007,\"two\nlines, with \"\"quotes\"\"\",Zürich 🏔\r\n"
                     "\r\n008,\u2028odd\u2029,北京\r\n009,last,x".encode())
    tasks = load(path, id="id")
    assert [(t.task_index, t.task_id) for t in tasks] == [(1, "007"), (2, "008"), (3, "009")]
    assert tasks[0].prompt == 'two\nlines, with "quotes"'
    assert tasks[0].answer["target"] == ["Zürich 🏔"] and tasks[1].prompt == "\u2028odd\u2029"
    assert [t.meta["line"] for t in tasks] == [2, 5, 6]  # row 2 starts after the cell's line break


def test_a_bad_jsonl_row_is_named_and_skipping_it_shifts_nothing(tmp_path, caplog):
    path = tmp_path / "data.jsonl"
    path.write_text('{"question": "a", "answer": "1"}\n\n{"question": "b", "answer": 2\n'
                    '{"question": "c", "answer": "3"}\n')
    with pytest.raises(DataFileError, match=r"data\.jsonl:3:30: record: expected one JSON value per line "
                                            r"\(Expecting ',' delimiter\); fix the record, or set "
                                            r"options.skip_invalid_records"):
        load(path)
    with caplog.at_level(logging.WARNING, logger="seqk"):
        tasks = load(path, skip_invalid_records=True)
    assert [(t.task_index, t.prompt) for t in tasks] == [(1, "a"), (3, "c")]
    assert "skipped 1 row(s)" in caplog.text and "data.jsonl:3" in caplog.text


def test_a_row_without_a_field_is_named_with_the_fields_it_has(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text('{"question": "a", "answer": "1"}\n{"question": "b", "ans": "2"}\n'
                    '{"question": "c", "answer": "3"}\n')
    with pytest.raises(DataFileError, match=r"data\.jsonl:2: answer: expected a field 'answer' "
                                            r"\(this row has: question, ans\)"):
        load(path)
    assert [t.task_index for t in load(path, skip_invalid_records=True)] == [1, 3]


@pytest.mark.parametrize("suffix", ["csv", "jsonl", "parquet"])
def test_a_field_the_file_lacks_names_the_fields_it_has(tmp_path, suffix):
    path = tmp_path / f"data.{suffix}"
    frame = pl.DataFrame({"id": ["1"], "question": ["q"], "answer": ["a"]})
    {"csv": frame.write_csv, "jsonl": frame.write_ndjson, "parquet": frame.write_parquet}[suffix](path)
    with pytest.raises(ConfigError, match=r"options\.target: no field 'answr' in .*data\." + suffix +
                       r"; .*: id, question, answer \(did you mean 'answer'\?\)"):
        load(path, target="answr")
    with pytest.raises(ConfigError, match=r"options\.input: no field 'q'"):
        load(path, input="Q: {q}")


def test_csv_cells_that_do_not_fit_name_line_and_column(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text('id,question,answer\n1,"multi\nline",x\n2,q,\n3,q,z\n')
    with pytest.raises(DataFileError, match=r"data\.csv:4: answer: expected a target \(the value is empty\)"):
        load(path)
    path.write_text('id,question,answer\n1,"multi\nline",x\n2,q,y\n3,q,z,extra\n')
    with pytest.raises(DataFileError, match=r"data\.csv:5: row: expected 3 cells, as the header has "
                                            r"\(this row has 4\)"):
        load(path)
    assert [t.task_index for t in load(path, skip_invalid_records=True)] == [1, 2]


def test_duplicate_ids_name_both_rows(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text('{"id": "q1", "question": "a", "answer": "1"}\n{"id": "q1", "question": "b", "answer": "2"}\n')
    with pytest.raises(DataFileError, match=r"data\.jsonl:2: id: expected a unique id \('q1' is also "
                                            r".*data\.jsonl:1's\)"):
        load(path, id="id")


def test_a_json_array_names_the_line_each_row_starts_on(tmp_path):
    path = tmp_path / "data.json"
    path.write_text('[\n  {"question": "a", "answer": "1"},\n  {"question": "b",\n   "answer": null},\n'
                    '  {"question": "c", "answer": "3"}\n]\n')
    with pytest.raises(DataFileError, match=r"data\.json:3: answer: expected a value \(it is null\)"):
        load(path)
    path.write_text('[{"question": "a", "answer": "1"},\n {"question": "b" "answer": 2}]')
    with pytest.raises(DataFileError, match=r"data\.json:2:19: record: expected a JSON value"):
        load(path)
    path.write_text('{"question": "a", "answer": "1"}')
    with pytest.raises(DataFileError, match="expected a JSON array of objects"):
        load(path)


def test_bytes_that_are_not_utf8_are_named_by_line_and_column(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_bytes(b'{"question": "a", "answer": "1"}\n{"question": "caf\xe9", "answer": "2"}\n')
    with pytest.raises(DataFileError, match=r"data\.jsonl:2:18: expected UTF-8 text \(byte 0xe9 is not\)"):
        load(path)


def test_targets_are_checked_against_the_scorer(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text('{"question": "a", "answer": 5}\n{"question": "b", "answer": "five"}\n')
    with pytest.raises(DataFileError, match=r"data\.jsonl:2: answer: expected a number \(it is 'five'\)"):
        load(path, scorer="numeric")


def test_choice_targets_as_letters_texts_or_counted_indices(tmp_path):
    path = tmp_path / "data.parquet"
    pl.DataFrame({"question": ["a", "b", "c"], "options": [["x", "y", "z"]] * 3, "answer": [0, 2, 1]}
                 ).write_parquet(path)
    with pytest.raises(DataFileError, match=r"data\.parquet: row 1: answer: expected a letter, or the text of "
                                            r"a choice \(it is the number 0: set options.choice_index_from"):
        load(path, choices="options", scorer="choice")
    tasks = load(path, choices="options", scorer="choice", choice_index_from=0)
    assert [t.answer["target"] for t in tasks] == [["A"], ["C"], ["B"]]
    assert tasks[0].prompt.startswith("Answer the following multiple choice question.")
    assert tasks[0].prompt.endswith("a\n\nA) x\nB) y\nC) z")
    assert [t.meta for t in tasks] == [{"row": 1}, {"row": 2}, {"row": 3}]
    csv = tmp_path / "mc.csv"
    csv.write_text('question,A,B,answer\nq1,x,y,b\nq2,x,y,y\nq3,x,y,Bad\n')
    with pytest.raises(DataFileError, match=r"mc\.csv:4: answer: expected a letter A-B, or the text of a choice"):
        load(csv, choices=["A", "B"], scorer="choice")
    assert [t.answer["target"] for t in load(csv, choices=["A", "B"], scorer="choice",
                                              skip_invalid_records=True)] == [["B"], ["B"]]


def test_templates_system_and_choices_in_the_prompt(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text(json.dumps({"q": "Pick one", "opts": ["red", "blue"], "answer": "B", "tone": "brief"}) + "\n")
    task = load(path, input="{q}\n{choices}\n(one of {letters}; {{braces}})", choices="opts",
                system="Be {tone}.", scorer="choice")[0]
    assert task.prompt == "Be brief.\n\nPick one\nA) red\nB) blue\n(one of A,B; {braces})"
    with pytest.raises(ConfigError, match=r"options\.input: \{q!r\} is not a field name"):
        load(path, input="{q!r}")


def test_a_changed_file_is_new_data(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text('{"question": "a", "answer": "1"}\n')
    first = benchmark.data_fingerprint(options(path))
    path.write_text('{"question": "a", "answer": "2"}\n')
    assert benchmark.data_fingerprint(options(path)) != first
    assert load(path)[0].answer["target"] == ["2"]


@pytest.mark.parametrize("keys, message", [
    ({}, "exactly one"),
    ({"path": "x.txt"}, "expected a .jsonl, .json, .csv or .parquet file"),
    ({"path": "x.jsonl", "split": "test"}, "belong to an `hf` dataset"),
    ({"hf": "owner/name"}, "needs its `split`"),
    ({"hf": "not a repo", "split": "test"}, "should match pattern"),
    ({"path": "x.jsonl", "scorer": "choice"}, "the choice scorer needs `choices`"),
])
def test_options_that_cannot_work_are_refused(keys, message):
    with pytest.raises(ValueError, match=message):
        benchmark.Options.model_validate({"scorer": "exact"} | keys)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(ConfigError, match=r"options\.path: no file at .*nowhere\.jsonl"):
        load(tmp_path / "nowhere.jsonl")
