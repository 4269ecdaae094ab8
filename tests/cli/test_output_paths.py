"""Every output path is checked before anything is spent or written: a bad export_dir, --db,
--html, --png, --to or --parquet is one `error:` line and exit 2, never a traceback, and no
call is made."""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers import write_variant
from typer.testing import CliRunner

from seqk import models
from seqk.cli import app

runner = CliRunner()


def _calls_counted(tmp_path):
    """A mock actor that counts its calls (a call would be money spent)."""
    calls = []
    models.register_mock("mock/counted", lambda prompt: calls.append(prompt) or "wrong")
    return calls


def _single_error_line(output: str) -> str:
    assert "Traceback" not in output
    lines = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, output
    return lines[0]


def test_an_export_dir_that_cannot_be_written_stops_the_run_before_the_first_call(tmp_path, db):
    calls = _calls_counted(tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    variant = write_variant(tmp_path, metric="pass@k", k=2, model="mock/counted", options={"n": 2},
                            export_dir=str(blocker / "runs"))
    result = runner.invoke(app, ["run", str(variant), "--db", str(db)])
    assert result.exit_code == 2, result.output
    line = _single_error_line(result.output)
    assert "export_dir: expected a folder seqk can write the run's files into" in result.output, line
    assert f"{blocker} is a file, so the folder {blocker / 'runs'} cannot be made" in result.output
    assert calls == [] and not db.exists()


def test_a_database_whose_folder_cannot_be_made_stops_the_run_before_the_first_call(tmp_path):
    calls = _calls_counted(tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    variant = write_variant(tmp_path, metric="pass@k", k=2, model="mock/counted", options={"n": 2})
    result = runner.invoke(app, ["run", str(variant), "--db", str(blocker / "x" / "seqk.duckdb")])
    assert result.exit_code == 2, result.output
    assert _single_error_line(result.output).startswith(
        f"error: the database {blocker / 'x' / 'seqk.duckdb'} cannot be written: {blocker} is a file")
    assert calls == []


def test_export_and_report_outputs_under_a_file_are_refused_before_any_work(tmp_path, db):
    models.register_mock("mock/actor", lambda prompt: "wrong")
    variant = write_variant(tmp_path, metric="pass@k", k=1, model="mock/actor", options={"n": 1})
    assert runner.invoke(app, ["run", str(variant), "--db", str(db), "--no-export"]).exit_code == 0
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    for args, option in ((["export", "--parquet", str(blocker / "pq")], "--parquet"),
                         (["export", "--to", str(blocker / "out")], "--to"),
                         (["report", "--html", str(blocker / "r.html")], "--html"),
                         (["report", "--png", str(blocker / "r.png")], "--png")):
        result = runner.invoke(app, [*args, "--db", str(db)])
        assert result.exit_code == 2, (args, result.output)
        line = _single_error_line(result.output)
        assert line.startswith(f"error: {option} {blocker}"), line
    assert blocker.read_text() == "not a folder"


def test_export_parquet_into_a_bad_folder_prints_no_traceback_from_a_real_process(tmp_path, db):
    models.register_mock("mock/actor", lambda prompt: "wrong")
    variant = write_variant(tmp_path, metric="pass@k", k=1, model="mock/actor", options={"n": 1})
    runner.invoke(app, ["run", str(variant), "--db", str(db), "--no-export"])
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    done = subprocess.run([sys.executable, "-m", "seqk", "export", "--parquet", str(blocker / "pq"),
                           "--db", str(db)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (f"error: --parquet {blocker / 'pq'} cannot be written: {blocker} is a "
                                   f"file, so the folder {blocker / 'pq'} cannot be made")


@pytest.mark.slow
def test_report_html_and_png_into_a_folder_that_does_not_exist_make_it(tmp_path, db):
    """As --db does: a missing folder is made (only once the report is computed: a report that
    fails leaves nothing behind)."""
    models.register_mock("mock/actor", lambda prompt: "wrong")
    variant = write_variant(tmp_path, metric="pass@k", k=1, model="mock/actor", options={"n": 1})
    assert runner.invoke(app, ["run", str(variant), "--db", str(db), "--no-export"]).exit_code == 0
    missing = tmp_path / "not" / "yet"
    refused = runner.invoke(app, ["report", "nope", "--html", str(missing / "r.html"), "--db", str(db)])
    assert refused.exit_code == 2 and not (tmp_path / "not").exists()
    result = runner.invoke(app, ["report", "--html", str(missing / "r.html"), "--png", str(missing / "r.png"),
                                 "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "<html" in (missing / "r.html").read_text().lower()
    assert (missing / "r.png").read_bytes().startswith(b"\x89PNG")
