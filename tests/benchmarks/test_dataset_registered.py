"""A data set's tasks table is written as it was before registering was made fast (issue 31, commit
ede93b8): every task's task_id, prompt, content_hash and meta byte for byte, for the shipped
examples and for files with what makes reading hard (a byte-order mark, CRLF, blank lines, U+2028,
numbers, lists, skipped rows; CSV and Parquet). So a database registered then resumes now.

tests/benchmarks/fixtures/dataset_tasks_ede93b8.jsonl holds the rows that commit wrote for CASES
(one line per task: the case, then the tasks table's columns, meta as the text stored)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import polars as pl
import pytest
import yaml

from seqk import store
from seqk.config import runspec
from seqk.errors import RunConflict
from seqk.run.prepare import prepare

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).parent / "fixtures" / "dataset_tasks_ede93b8.jsonl"

AWKWARD = [
    {"id": " a1 ", "question": "Zürich or Genève?\u2028 (two\u2029lines)", "answer": "Zürich"},
    {"id": "a2", "question": "How many? 🙂", "answer": 3},
    {"id": "a3", "question": "tabs\tand \"quotes\" and \\ backslash", "answer": 2.5},
    {"id": "a4", "question": "Either", "answer": ["x", "y"]},
    {"id": 5, "question": {"nested": [1, "é"]}, "answer": True},
    {"id": "a6", "question": "漢字\x0b\x0c\x1c\x85", "answer": "1,000"},
    {"id": "a2", "question": "the id of row 2 again", "answer": "7"},
    {"id": "a8", "question": "  ", "answer": "-4.5e3"},
]


def _awkward_jsonl(folder: Path) -> Path:
    lines = [json.dumps(r, ensure_ascii=False) for r in AWKWARD]
    lines.insert(3, '{"id": "bad", "question": ')  # skipped: the rows after keep their numbers
    path = folder / "awkward.jsonl"
    path.write_bytes(("\ufeff" + "\r\n".join(lines[:2]) + "\r\n\n  \n" + "\n".join(lines[2:])).encode())
    return path


def _awkward_csv(folder: Path) -> Path:
    path = folder / "awkward.csv"
    path.write_bytes("\ufeffid,question,answer,rubric\r\n a1 ,\"two\nlines, \"\"quoted\"\"\",Zürich,names it\r\n"
                     "\r\na2,\u2028odd\u2029,42,says 42\r\na3,only two\r\na4,last,007,keeps 007".encode())
    return path


def _awkward_parquet(folder: Path) -> Path:
    path = folder / "awkward.parquet"
    pl.DataFrame({"id": ["p1", "p2", "p3"], "question": ["What is 2 + 2?", "Ünïcödé ✓", "x\u2028y"],
                  "answer": [4, 10, -3], "choices": [["1", "4"], ["10", "11"], ["-3", "3"]],
                  "weight": [1.5, None, 2.0]}).write_parquet(path)
    return path


def _mmlu_jsonl(folder: Path) -> Path:
    path = folder / "mmlu.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [
        {"question": "Pick the prime.", "choices": ["4", "6", "7", "9"], "answer": 2, "subject": "math"},
        {"question": "Pick the vowel.", "choices": ["b", "e", "k"], "answer": 1, "subject": "letters"}]))
    return path


CASES = {
    "arithmetic": ("variants/dataset/arithmetic.seqk.format.yaml", None, {}),
    "choices": ("variants/dataset/choices.seqk.format.yaml", None, {}),
    "awkward-jsonl": (None, _awkward_jsonl, {"id": "id", "input": "question", "target": "answer",
                                             "scorer": "exact", "skip_invalid_records": True}),
    "awkward-jsonl-numeric": (None, _awkward_jsonl, {"id": "id", "input": "question", "target": "answer",
                                                     "scorer": "numeric", "skip_invalid_records": True}),
    "awkward-jsonl-template": (None, _awkward_jsonl, {"input": "Q: {question}", "system": "Row {id}.",
                                                      "target": "answer", "scorer": "includes",
                                                      "skip_invalid_records": True}),
    "awkward-csv": (None, _awkward_csv, {"id": "id", "input": "question", "target": "answer",
                                         "scorer": {"llm_rubric": {"column": "rubric"}},
                                         "skip_invalid_records": True}),
    "awkward-parquet": (None, _awkward_parquet, {"id": "id", "input": "question", "target": "answer",
                                                 "scorer": "numeric"}),
    "awkward-parquet-choices": (None, _awkward_parquet, {"input": "question", "target": "answer",
                                                         "choices": "choices", "scorer": "choice"}),
    "mmlu": (None, _mmlu_jsonl, {"input": "question", "choices": "choices", "target": "answer",
                                 "choice_index_from": 0, "scorer": "choice"}),
}


def spec_of(case: str, folder: Path) -> runspec.RunSpec:
    """The case's variant, loaded from the repository root (where the shipped ones name their data)."""
    shipped, write, options = CASES[case]
    if shipped is not None:
        return runspec.load(ROOT / shipped)
    data = write(folder)
    variant = folder / f"{case}.yaml"
    variant.write_text(yaml.safe_dump({"benchmark": "dataset", "metric": "seq@k", "k": 2, "model": "mock/echo",
                                       "judge_model": "mock/echo", "options": {"path": str(data), **options}}))
    return runspec.load(variant)


def tasks_table(db: Path, run_id: str) -> list[list[object]]:
    """The run's rows of the tasks table, by index: task_index, task_id, prompt, content_hash, meta."""
    with store.connect(db, read_only=True) as con:
        table = store.parquet_tables(con, [run_id], ["tasks"])["tasks"]
    columns = ["task_index", "task_id", "prompt", "content_hash", "meta"]
    return [list(row) for row in zip(*(table.column(c).to_pylist() for c in columns), strict=True)]


def fixture_rows(case: str) -> list[list[object]]:
    with FIXTURE.open(encoding="utf-8") as lines:
        found = [json.loads(line) for line in lines]
    return [row[1:] for row in found if row[0] == case]


@pytest.mark.parametrize("case", list(CASES))
def test_the_tasks_table_is_the_one_registered_before(case, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    spec = spec_of(case, tmp_path)
    db = tmp_path / "seqk.duckdb"
    assert prepare(spec, db).action == "new"
    before = fixture_rows(case)
    assert len(before) == len(spec.tasks) > 1
    assert tasks_table(db, spec.run_id) == before


@pytest.mark.parametrize("case", ["arithmetic", "awkward-jsonl", "awkward-parquet"])
def test_a_database_holding_the_rows_registered_before_resumes(case, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    spec = spec_of(case, tmp_path)
    db = tmp_path / "seqk.duckdb"
    # The run as the earlier code left it: its run row (written by code this change left alone)
    # and the task rows it wrote, exactly as stored.
    prepare(dataclasses.replace(spec, tasks=[]), db)
    rows = [dict(zip(["task_index", "task_id", "prompt", "content_hash", "meta"], r, strict=True))
            for r in fixture_rows(case)]
    with store.connect(db) as con, store.transaction(con):
        store.insert_tasks(con, spec.run_id, [r | {"meta": json.loads(r["meta"])} for r in rows])
    assert tasks_table(db, spec.run_id) == fixture_rows(case)
    resumed = prepare(spec, db)
    assert resumed.action == "resume" and resumed.n_selected == len(rows)
    assert tasks_table(db, spec.run_id) == fixture_rows(case)
    # And the comparison is one: a task whose content differs is refused.
    changed = dataclasses.replace(spec, tasks=[dataclasses.replace(spec.tasks[0], prompt="something else")]
                                  + spec.tasks[1:])
    with pytest.raises(RunConflict, match=r"task 1 \(.*\): content changed"):
        prepare(changed, db)
