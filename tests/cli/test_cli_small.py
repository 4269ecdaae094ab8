"""Small promises of the command line (issue 17): --version, one SQL statement at a time,
a closed pipe is not an error, and the report's † footnote only beside a † mark."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import write_variant
from typer.testing import CliRunner

from seqk import __version__, models
from seqk.analysis import report
from seqk.cli import app
from seqk.config import spec as runspec
from seqk.render import text as report_text
from seqk.run import scheduler as engine

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


def test_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output == f"seqk {__version__}\n" == "seqk 0.1.0\n"
    assert "--version" in runner.invoke(app, ["--help"], env={"COLUMNS": "200"}).output


def test_sql_refuses_several_statements_as_its_help_says(tmp_path, db):
    models.register_mock("mock/a", lambda p: "nope")
    engine.run(runspec.load(write_variant(tmp_path, benchmark="toy", metric="pass@k", k=1,
                                          model="mock/a", options={"n": 1})), db)
    result = runner.invoke(app, ["sql", "SELECT 1; SELECT 2", "--db", str(db)])
    assert result.exit_code == 2
    assert result.output == "error: one SQL statement at a time: this query has 2; run them one by one\n"
    assert "several are refused" in runner.invoke(app, ["sql", "--help"], env={"COLUMNS": "200"}).output
    one = runner.invoke(app, ["sql", "SELECT 2 AS two;", "--db", str(db), "--format", "csv"])
    assert one.exit_code == 0 and one.output == "two\n2\n"


def read_a_little_then_close(*args: str) -> subprocess.CompletedProcess:
    """`seqk <args> | head -c 100`: the reader stops early and closes the pipe."""
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "seqk", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    assert len(proc.stdout.read(100)) == 100
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    proc.wait(60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, "", stderr)


@pytest.mark.slow
def test_a_closed_pipe_ends_every_command_quietly_with_exit_0(tmp_path, db):
    models.register_mock("mock/long", lambda p: "word " * 200_000)  # ~1 MB: more than a pipe holds
    spec = runspec.load(write_variant(tmp_path, benchmark="toy", metric="pass@k", k=1,
                                      model="mock/long", options={"n": 1}))
    engine.run(spec, db)
    for args in (["inspect", spec.run_id, "--task-index", "1"],
                 ["sql", "SELECT * FROM range(300000)", "--format", "csv"]):
        done = read_a_little_then_close(*args, "--db", str(db))
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr


def test_the_grading_footnote_refers_to_a_mark_a_block_carries(tmp_path, db):
    models.register_mock("mock/a", lambda p: "nope")
    for name, mode in (("hint.yaml", "hint"), ("blind.yaml", "binary")):
        engine.run(runspec.load(write_variant(tmp_path, name, benchmark="toy", metric="seq@k", k=1, model="mock/a",
                                              feedback_mode=mode, options={"n": 1})), db)
    for compare in (False, True):
        rep = report.report(compare=compare, db=db)
        text = report_text.to_text(rep)
        blocks, notes = text.split("\n\n• ", 1)
        assert any(n.startswith(report.GRADING_MARK) for n in rep.notes)
        assert f"hint {report.GRADING_MARK}" in blocks and f"binary {report.GRADING_MARK}" not in blocks
