"""`seqk view` on the command line: a bad database, port or option is one `error:` line and
exit 2; importing seqk, or asking for help, imports no web framework."""

from __future__ import annotations

import socket
import subprocess
import sys

import view_db
from typer.testing import CliRunner

from seqk.cli import app

runner = CliRunner()


def test_help_and_import_load_no_web_framework():
    code = ("import sys; import seqk, seqk.view; from seqk.cli import app; from typer.testing import CliRunner; "
            "r = CliRunner().invoke(app, ['view', '--help']); assert r.exit_code == 0, r.output; "
            "print(sorted(m for m in ('starlette', 'uvicorn', 'jinja2') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_bad_db_is_one_error_line_and_exit_2(tmp_path):
    (tmp_path / "junk.duckdb").write_text("not a database")
    for db, message in ((tmp_path / "missing.duckdb", "error: no database at"),
                        (tmp_path, "is a folder; --db (or SEQK_DB) names a DuckDB file"),
                        (tmp_path / "junk.duckdb", "as a DuckDB database")):
        result = runner.invoke(app, ["view", "--db", str(db)])
        assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output
        assert len(result.output.strip().splitlines()) == 1


def test_a_taken_port_and_misplaced_options_are_one_error_line(tmp_path, db):
    view_db.build(tmp_path, db)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = runner.invoke(app, ["view", "--db", str(db), "--port", str(port)])
    assert result.exit_code == 2 and f"error: cannot listen on 127.0.0.1:{port}" in result.output
    result = runner.invoke(app, ["view", "--db", str(db), "--runs", "toy*"])
    assert result.exit_code == 2 and "--runs chooses what --bundle writes" in result.output
    (tmp_path / "file").write_text("x")
    result = runner.invoke(app, ["view", "--db", str(db), "--bundle", str(tmp_path / "file")])
    assert result.exit_code == 2 and "is a file; it names a folder" in result.output
    result = runner.invoke(app, ["view", "--db", str(db), "--bundle", str(tmp_path / "s"), "--runs", "nope"])
    assert result.exit_code == 2 and "no run matches 'nope'" in result.output


def test_bundle_of_chosen_runs(tmp_path, db):
    ids = view_db.build(tmp_path, db)
    result = runner.invoke(app, ["view", "--db", str(db), "--bundle", str(tmp_path / "site"),
                                 "--runs", "toy-plain/seqk/*", "--max-tasks", "2"])
    assert result.exit_code == 0, result.output
    assert "(2 of 3 runs, at most 2 tasks each)" in result.output
    assert (tmp_path / "site" / "runs" / ids["seq"] / "tasks" / "2.html").is_file()
    assert not (tmp_path / "site" / "runs" / ids["seq"] / "tasks" / "3.html").exists()
    assert not (tmp_path / "site" / "runs" / ids["pass"]).exists()
