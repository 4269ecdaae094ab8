"""The command line as a user types it: exit codes and the words a user reads."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from helpers import write_variant
from scripts import solves_on
from typer.testing import CliRunner

from seqk import models
from seqk.cli import app

runner = CliRunner()


def run_toy(tmp_path, db, **keys):
    keys = {"metric": "seq@k", "k": 3, "model": "mock/actor", "options": {"n": 3}} | keys
    return runner.invoke(app, ["run", str(write_variant(tmp_path, **keys)), "--db", str(db),
                               "--no-export"])


def test_help_is_fast_and_imports_neither_litellm_nor_boto3():
    code = ("import sys; from seqk.cli import app; from typer.testing import CliRunner; "
            "r = CliRunner().invoke(app, ['--help']); assert r.exit_code == 0, r.output; "
            "print(sorted(m for m in ('litellm', 'boto3', 'duckdb', 'altair', 'ray', 'psycopg', 'inspect_ai', 'polars')"
            " if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_command_has_a_docstring_with_an_example():
    for command in app.registered_commands:
        doc = command.callback.__doc__ or ""
        assert "Example: seqk " in doc, f"{command.callback.__name__} lacks an example"


# How typer and click name a value by its Python type: "<bool>", "<list[str]>", "<path>", "TEXT".
_TYPE_METAVAR = re.compile(r"<(bool|int|float|str|path|file|list\[|dict\[|tuple)|\b(TEXT|INTEGER|BOOLEAN|FLOAT|PATH)\b")


def test_every_commands_help_names_values_by_meaning_and_shows_an_example():
    import typer.main

    commands = typer.main.get_command(app).commands
    assert {"run", "status", "inspect", "sql", "plan", "report", "export", "import", "upload"} <= set(commands)
    for name in [None, *commands]:
        result = runner.invoke(app, [name, "--help"] if name else ["--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, result.output
        found = _TYPE_METAVAR.search(result.output)
        assert found is None, f"seqk {name} --help shows the type metavar {found.group(0)!r}"
        if name:
            assert "Example: seqk " + name in result.output, f"seqk {name} --help lacks an example"
    status = runner.invoke(app, ["status", "--help"], env={"COLUMNS": "200"}).output
    assert "[RUN_ID]..." in status and re.search(r"--db +FILE\|URL +DuckDB file", status)
    assert re.search(r"--json +Print JSON", status)  # a flag shows no value at all
    assert re.search(r"--task-index +N ", runner.invoke(app, ["inspect", "--help"], env={"COLUMNS": "200"}).output)


def test_run_prints_what_it_did_and_status_shows_it(tmp_path, db):
    models.register_mock("mock/actor", solves_on({1: 1, 2: 3}))
    result = run_toy(tmp_path, db)
    assert result.exit_code == 0, result.output
    assert "toy-plain/seqk/mock__actor/deterministic/binary: 7 attempts written" in result.output
    assert "2 passed, 1 failed, 0 with errors" in result.output
    again = run_toy(tmp_path, db)
    assert again.exit_code == 0 and "0 of 3 tasks to run (3 already finished)" in again.output
    status = runner.invoke(app, ["status", "--db", str(db)])
    assert status.exit_code == 0
    assert "toy-plain/seqk/mock__actor/deterministic/binary" in status.output


def test_verbose_prints_prompts_cut_at_the_limit(tmp_path, db):
    models.register_mock("mock/actor", lambda p: "x" * 500)
    result = runner.invoke(app, ["run", str(write_variant(
        tmp_path, metric="seq@k", k=1, model="mock/actor", options={"n": 1},
        console_char_limit=100)), "--db", str(db), "--verbose", "--no-export"])
    assert result.exit_code == 0, result.output
    assert "task 1 · attempt 1/1" in result.output
    assert "x" * 100 + "\n… [400 more characters" in result.output


def test_inspect_prints_the_whole_trajectory(tmp_path, db):
    models.register_mock("mock/actor", solves_on({2: 2}))
    run_toy(tmp_path, db)
    run_id = "toy-plain/seqk/mock__actor/deterministic/binary"
    result = runner.invoke(app, ["inspect", run_id, "--task-index", "2", "--db", str(db)])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "attempt 1 of 3" in out and "attempt 2 of 3" in out and "attempt 3" not in out
    assert "FAIL" in out and "PASS" in out and "Incorrect." in out
    assert "<PreviousAttempt 1>\nnot-w2\n</PreviousAttempt 1>" in out
    assert "call 1 actor mock/actor: in=" in out
    by_id = runner.invoke(app, ["inspect", "toy-plain/seqk/*", "--task-id", "t2", "--db", str(db)])
    assert by_id.exit_code == 0 and by_id.output == out


def test_inspect_unknown_run_or_task_exits_2(tmp_path, db):
    models.register_mock("mock/actor", solves_on({}))
    run_toy(tmp_path, db)
    result = runner.invoke(app, ["inspect", "nope", "--task-index", "1", "--db", str(db)])
    assert result.exit_code == 2 and "no run matches 'nope'" in result.output
    result = runner.invoke(app, ["inspect", "toy-plain", "--task-index", "9", "--db", str(db)])
    assert result.exit_code == 2 and "has no task with index 9" in result.output


def test_status_without_a_database_says_so(tmp_path):
    result = runner.invoke(app, ["status", "--db", str(tmp_path / "none.duckdb")])
    assert result.exit_code == 2 and "no database at" in result.output


def test_sql_prints_rows_as_csv_and_json(tmp_path, db):
    models.register_mock("mock/actor", solves_on({}))
    run_toy(tmp_path, db, k=2)
    result = runner.invoke(app, ["sql", "SELECT metric, k FROM runs", "--db", str(db),
                                 "--format", "csv"])
    assert result.exit_code == 0 and result.output.splitlines() == ["metric,k", "seq@k,2"]
    result = runner.invoke(app, ["sql", "SELECT count(*) AS n FROM attempts", "--db", str(db),
                                 "--format", "json"])
    assert '"n": 6' in result.output


def test_sql_tables_show_floats_at_six_significant_digits_and_csv_json_keep_every_digit(tmp_path, db):
    models.register_mock("mock/actor", solves_on({}))
    run_toy(tmp_path, db, k=2)
    query = ("SELECT 1 / 3 AS third, 0.0 :: DOUBLE AS zero, 12345.678912 :: DOUBLE AS big, 1e-7 :: DOUBLE AS tiny, "
             "k FROM runs")
    table = runner.invoke(app, ["sql", query, "--db", str(db)])
    assert table.exit_code == 0, table.output
    row = next(line for line in table.output.splitlines() if "0.333333" in line)
    assert [c.strip() for c in row.strip("│ ").split("│")] == ["0.333333", "0", "12345.7", "1e-07", "2"]
    assert "0.3333333333" not in table.output
    as_json = runner.invoke(app, ["sql", query, "--db", str(db), "--format", "json"])
    assert '"third": 0.3333333333333333' in as_json.output
    as_csv = runner.invoke(app, ["sql", query, "--db", str(db), "--format", "csv"])
    assert as_csv.output.splitlines()[1].startswith("0.3333333333333333,")


def test_plan_shows_the_work_left_without_writing(tmp_path, db):
    models.register_mock("mock/actor", solves_on({1: 1}))
    models.register_mock("mock/critic", lambda p: "hmm")
    path = write_variant(tmp_path, metric="seq@k", k=3, model="mock/actor", options={"n": 4},
                         feedback_mode="critic", critic_model="mock/critic")
    result = runner.invoke(app, ["plan", str(path), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "toy-plain/seqk/mock__actor/deterministic/critic.mock__critic  (new run)" in result.output
    assert "attempts to run: 4 to 12 (seq@k stops at a task's first success)" in result.output
    assert "critic calls up to 12" in result.output
    assert not db.exists()
    runner.invoke(app, ["run", str(path), "--db", str(db), "--no-export"])
    more = write_variant(tmp_path, "more.yaml", metric="seq@k", k=5, model="mock/actor",
                         options={"n": 4}, feedback_mode="critic", critic_model="mock/critic",
                         **{"continue": True})
    result = runner.invoke(app, ["plan", str(more), "--db", str(db)])
    assert "(extend k 3→5)" in result.output and "attempts to run: 3 to 6" in result.output


def test_plan_refuses_a_local_model_whose_file_is_missing_as_run_does(tmp_path, db):
    missing = tmp_path / "no-such-model.gguf"
    path = write_variant(tmp_path, metric="pass@k", k=1, model=f"local/{missing}", options={"n": 1})
    for command in (["plan"], ["run", "--no-export"]):
        result = runner.invoke(app, [*command, str(path), "--db", str(db)])
        assert result.exit_code == 2, result.output
        assert f"error: the model file {missing} does not exist" in result.output
        assert "Traceback" not in result.output
    assert not db.exists()


def test_plan_refuses_a_local_model_without_llama_cpp_and_starts_no_worker(tmp_path, db, monkeypatch):
    from seqk.models.local import workers

    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF" + bytes(16))
    path = write_variant(tmp_path, metric="pass@k", k=1, model=f"local/{gguf}", options={"n": 1})

    def no_worker(*args, **kwargs):
        raise AssertionError("seqk plan started a model worker")

    monkeypatch.setattr(workers, "start_worker", no_worker)
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # find_spec then finds nothing
    result = runner.invoke(app, ["plan", str(path), "--db", str(db)])
    assert result.exit_code == 2, result.output
    assert "error: local/... models need llama-cpp-python, which is not installed" in result.output
    # With llama-cpp-python there, the file and the package are all plan checks: no worker starts.
    monkeypatch.delitem(sys.modules, "llama_cpp")
    real_find_spec = workers.importlib.util.find_spec
    monkeypatch.setattr(workers.importlib.util, "find_spec",
                        lambda name, *a: object() if name == "llama_cpp" else real_find_spec(name, *a))
    result = runner.invoke(app, ["plan", str(path), "--db", str(db)])
    assert result.exit_code == 0, result.output


def test_refused_resume_exits_2_with_the_reason(tmp_path, db):
    models.register_mock("mock/actor", solves_on({}))
    run_toy(tmp_path, db)
    result = run_toy(tmp_path, db, temperature=0.1)
    assert result.exit_code == 2
    assert "was made with different settings (actor.temperature, critic.temperature)" in result.output \
        or "was made with different settings (actor.temperature)" in result.output


def test_plan_estimates_actor_cost_from_prompt_length_and_max_tokens(tmp_path, db):
    from seqk.config import runspec
    from seqk.run.plan import plan_run

    path = write_variant(tmp_path, metric="seq@k", k=2, model="anthropic/claude-sonnet-4-6",
                         options={"n": 2}, max_tokens=100)
    p = plan_run(runspec.load(path), db)
    chars = len("Say the word w1.") + len("Say the word w2.")
    assert p.actor_cost_low == pytest.approx(chars / 4 * 3.0 / 1e6)
    # Two attempts per task; the second carries one earlier output of at most 100 tokens.
    high_in = 2 * (chars / 4) + 2 * 100
    assert p.actor_cost_high == pytest.approx((high_in * 3.0 + 4 * 100 * 15.0) / 1e6)


def test_status_updated_is_the_last_attempts_time_else_the_runs_creation(tmp_path, db):
    import duckdb

    models.register_mock("mock/actor", solves_on({}))
    run_toy(tmp_path, db)
    with duckdb.connect(str(db)) as con:
        # The run row's own timestamps are left far from any attempt's, so only the right one matches.
        con.execute("UPDATE run_rows SET created_at = '2001-02-03 04:05:06', updated_at = '2000-01-01'")
        last = con.execute("SELECT max(finished_at) FROM attempts").fetchone()[0]
    status = runner.invoke(app, ["status", "--db", str(db)])
    assert status.exit_code == 0 and str(last)[:19] in status.output and "2000-01-01" not in status.output
    with duckdb.connect(str(db)) as con:
        con.execute("DELETE FROM calls")
        con.execute("DELETE FROM attempts")
        con.execute("DELETE FROM chain_kept")  # what a store without attempts keeps
    status = runner.invoke(app, ["status", "--db", str(db)])
    assert status.exit_code == 0 and "2001-02-03 04:05:06" in status.output


def test_plan_of_pass_at_k_says_every_task_gets_exactly_k_attempts(tmp_path, db):
    models.register_mock("mock/actor", solves_on({1: 1}))
    path = write_variant(tmp_path, metric="pass@k", k=3, model="mock/actor", options={"n": 4})
    result = runner.invoke(app, ["plan", str(path), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "attempts to run: 12 (pass@k: exactly k=3 independent attempts per task)" in result.output
    assert "actor calls: 12; no critic calls" in result.output
    assert "first success" not in result.output


def test_inspect_prints_an_error_as_text_not_as_a_dict(tmp_path, db):
    from seqk.errors import PermanentProviderError

    models.register_mock("mock/actor", [PermanentProviderError("Missing credentials for the actor",
                                                               status_code=401)])
    run_toy(tmp_path, db, k=1, options={"n": 1})
    result = runner.invoke(app, ["inspect", "toy-plain", "--task-index", "1", "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "ERROR actor: PermanentProviderError (status 401)\n  Missing credentials for the actor\n" in result.output
    assert "{" not in result.output.split("prompt")[0] and "'stage'" not in result.output
    assert "call 1 actor mock/actor: failed after 0 retries: Missing credentials for the actor" in result.output
    assert "in=None" not in result.output
