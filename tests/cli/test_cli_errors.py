"""Every mistake a user makes on the command line ends in one clean `error: ...` line and exit
code 2: no traceback, and the words name what is wrong."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import write_variant
from toybench import ToyBench
from typer.testing import CliRunner

from seqk.benchmark import discovery
from seqk.cli import app

runner = CliRunner()
RUN_ID = "toy-plain/seqk/mock__wrong/deterministic/binary"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database holding one finished toy run, a copy of its export with a broken config.json,
    an empty folder and a plain file; made once, as no case changes them."""
    tmp_path = tmp_path_factory.mktemp("made")
    discovery.registry()["toy"] = ToyBench()  # before conftest's per-test fixture runs
    db = tmp_path / "seqk.duckdb"
    variant = write_variant(tmp_path, metric="seq@k", k=2, model="mock/wrong", options={"n": 2})
    result = runner.invoke(app, ["run", str(variant), "--db", str(db)])
    assert result.exit_code == 0, result.output
    (tmp_path / "file.txt").write_text("not a folder, not a database")
    (tmp_path / "empty").mkdir()
    shutil.copytree(tmp_path / "toy-plain", tmp_path / "broken" / "toy-plain")  # the run's export
    (tmp_path / "broken" / RUN_ID / "config.json").write_text("[1, 2]")
    return tmp_path


# (command line, words the user reads); {db}, {tmp}, {variant} and {file} are filled in.
CASES = [
    (["sql", "SELEC 1"], 'the query failed: Parser Error: syntax error at or near "SELEC"'),
    (["sql", "SELECT * FROM nope"], "Table with name nope does not exist"),
    (["sql", "DELETE FROM attempts"], "read-only mode"),
    (["sql", "  "], "no SQL statement given"),
    (["sql", "SELECT 1", "--format", "xml"], "'xml' is not one of table, csv, json"),
    (["sql", "SELECT 1", "--format", "tabel"], "'tabel' is not one of table, csv, json (did you mean 'table'?)"),
    (["sql"], "Missing argument 'QUERY'"),
    (["status", "nope"], "no run matches 'nope'; `seqk status` lists the runs"),
    (["status", "--db", "{tmp}/none.duckdb"], "no database at {tmp}/none.duckdb"),
    (["status", "--db", "{tmp}"], "{tmp} is a folder; --db (or SEQK_DB) names a DuckDB file"),
    (["status", "--db", "{file}"], "cannot open {file} as a DuckDB database"),
    (["status", "--bogus"], "No such option: --bogus"),
    (["inspect", "nope", "--task-index", "1"], "no run matches 'nope'"),
    (["inspect", RUN_ID, "--task-index", "9"], f"run {RUN_ID} has no task with index 9"),
    (["inspect", RUN_ID], "name the task by --task-index or by --task-id"),
    (["inspect", RUN_ID, "--task-index", "one"], "Invalid value for '--task-index'"),
    (["plan", "{tmp}/missing.yaml"], "[C01] (file): cannot read: No such file or directory"),
    (["plan", "{tmp}"], "[C01] (file): cannot read: Is a directory"),
    (["plan", "{variant}", "--db", "{tmp}"], "{tmp} is a folder"),
    (["run", "{tmp}/missing.yaml"], "[C01] (file): cannot read: No such file or directory"),
    (["run", "{variant}", "--db", "{file}"], "cannot open {file} as a DuckDB database"),
    (["run", "{variant}", "--db", "{file}/x.duckdb"],
     "the database {file}/x.duckdb cannot be written: {file} is a file"),
    (["run", "{variant}", "--max-tasks", "0"], "[C03] max_tasks: Input should be greater than 0"),
    (["report", "nope"], "no run matches 'nope'"),
    (["report", "--format", "xml"], "'xml' is not one of table, markdown, csv, json"),
    (["report", "--format", "jsn"], "'jsn' is not one of table, markdown, csv, json (did you mean 'json'?)"),
    (["report", "--html", "{tmp}"], "--html {tmp} is a folder; it names a file to write"),
    (["report", "--png", "{file}/x.png"],
     "--png {file}/x.png cannot be written: {file} is a file, not a folder"),
    (["export", "nope"], "no run matches 'nope'"),
    (["export", RUN_ID, "--to", "{file}"], "--to {file} is a file; it names a folder to write into"),
    (["export", "--parquet", "{file}"], "--parquet {file} is a file"),
    (["import", "{tmp}/missing"], "no folder at {tmp}/missing"),
    (["import", "{tmp}/empty"], "no run folders (with task-<i>/ inside) under {tmp}/empty"),
    (["import", "{tmp}/broken"], f"{{tmp}}/broken/{RUN_ID}/config.json holds a JSON list, not the object"),
    (["upload", RUN_ID, "--bucket", "b", "--from", "{tmp}/empty"], "no exported run folder at {tmp}/empty/"),
    (["nosuchcommand"], "No such command 'nosuchcommand'"),
]


@pytest.mark.parametrize(("args", "words"), CASES, ids=lambda c: " ".join(c) if isinstance(c, list) else "")
def test_a_user_mistake_gives_one_error_line_and_exit_2(made, args, words, monkeypatch):
    monkeypatch.chdir(made)  # the default database and runs/ stay inside the test's folder
    monkeypatch.delenv("SEQK_S3_BUCKET", raising=False)
    fill = {"tmp": str(made), "file": str(made / "file.txt"),
            "variant": str(made / "variants" / "toy" / "v.yaml")}
    argv = [a.format(**fill) for a in args]
    if "--db" not in argv and argv[0] not in ("nosuchcommand",):
        argv += ["--db", str(made / "seqk.duckdb")]
    result = runner.invoke(app, argv)
    out = result.output
    assert result.exit_code == 2, out
    assert "Traceback" not in out and isinstance(result.exception, SystemExit)
    assert out.startswith("error: "), out
    assert words.format(**fill) in out
    if "[C0" not in words:  # a variant's problems are listed one per line under its path
        assert len(out.strip().splitlines()) == 1, out


def test_a_file_that_is_not_a_database_is_left_as_it_was(made):
    result = runner.invoke(app, ["run", str(made / "variants" / "toy" / "v.yaml"), "--db", str(made / "file.txt")])
    assert result.exit_code == 2
    assert (made / "file.txt").read_text() == "not a folder, not a database"


def test_sql_json_and_table_formats_still_work(made):
    result = runner.invoke(app, ["sql", "SELECT k FROM runs", "--db", str(made / "seqk.duckdb"),
                                 "--format", "json"])
    assert result.exit_code == 0 and json.loads(result.output) == [{"k": 2}]


def test_a_file_the_system_refuses_is_named_in_one_line(made, monkeypatch):
    from seqk.io import export

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", "/srv/runs/task-1/attempt-1.json")

    monkeypatch.setattr(export, "export_runs", refuse)
    result = runner.invoke(app, ["export", RUN_ID, "--db", str(made / "seqk.duckdb"), "--to", "/srv/runs"])
    assert result.exit_code == 2
    assert result.output == "error: Permission denied: /srv/runs/task-1/attempt-1.json\n"
