"""terminalbench against a fake Harbor: the spec's command, artifacts read back into verdicts
and tokens, the chosen feedback mode (and only it) delivered through a private task copy,
Harbor failures recorded as errors, and redaction by whole tokens."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest
from helpers import context, write_variant
from pydantic import ValidationError

from benchmarks.terminalbench import TASKS, TerminalBench, benchmark, text
from seqk.benchmark import AgentContext, AgenticBenchmark, AttemptResult, HistoryItem, Task
from seqk.benchmark.prompt import DEFAULT
from seqk.config import spec as runspec
from seqk.errors import AgentRunError
from seqk.run import scheduler as engine

FAKE_HARBOR = Path(__file__).resolve().parents[2] / "benchmarks" / "terminalbench" / "fake_harbor.py"


class Harbor:
    """A fake Harbor executable and what it saw."""

    def __init__(self, folder: Path, outcomes: dict[str, str]):
        self.script = FAKE_HARBOR
        self.plan = folder / "plan.json"
        self.log = folder / "harbor.log"
        self.plan.write_text(json.dumps({"log": str(self.log), "outcomes": outcomes}))

    @property
    def executable(self) -> str:
        return f"{sys.executable} {self.script} --plan {self.plan}"

    def calls(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []


@pytest.fixture(autouse=True)
def _agent_key(monkeypatch):
    """Runs check that the actor's provider key is set before they start (Harbor's agent needs
    it); the fake Harbor needs none, so a placeholder stands in."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "placeholder-for-the-fake-harbor")


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    """Harbor's shared task cache, holding one package per task."""
    root = tmp_path / "harbor-cache"
    for name in TASKS:
        package = root / "terminal-bench" / name / "abc123"
        (package / "tests").mkdir(parents=True)
        (package / "instruction.md").write_text(f"Do {name} well.\n")
        (package / "tests" / "test_outputs.py").write_text("def test_x(): pass\n")
    return root


def options(tmp_path: Path, fake: Harbor, cache: Path, **more: Any) -> dict[str, Any]:
    return {"harbor_executable": fake.executable, "jobs_root": str(tmp_path / "jobs"),
            "harbor_cache": str(cache), **more}


class Actor:
    role = "actor"
    model = "anthropic/claude-sonnet-4-6"

    async def complete(self, prompt: str) -> str:
        raise AssertionError("Harbor calls the model, not seqk")


def attempt(tmp_path: Path, fake: Harbor, cache: Path, *, seq: bool = False, index: int = 1,
            history: list[HistoryItem] | None = None, **more: Any) -> AttemptResult:
    opts = benchmark.Options(**options(tmp_path, fake, cache, **more))
    task = benchmark.load_tasks(opts)[0]
    ctx = AgentContext(options=opts, judge=Actor(), critic=Actor(), mode=benchmark.feedback_mode("binary"),
                       attempt_index=index, k=3, seq=seq, history=history or [], run_id="terminalbench/x",
                       actor=Actor(), temperature=0.7,
                       retry_context=DEFAULT.context(index, 3, history or []) if seq else "")
    return asyncio.run(benchmark.run_attempt(task, task.prompt, ctx))


def test_contract_names() -> None:
    assert isinstance(benchmark, TerminalBench) and isinstance(benchmark, AgenticBenchmark)
    assert "verify" not in vars(TerminalBench)  # the kind, not a raising verify, keeps the engine off it
    assert benchmark.verifier == "harbor"
    assert [m.name for m in benchmark.feedback_modes] == ["binary", "raw", "retry_diagnostics"]
    assert not benchmark.feedback_mode("binary").shows_grading_info
    assert benchmark.feedback_mode("raw").shows_grading_info
    assert benchmark.feedback_mode("retry_diagnostics").shows_grading_info
    assert benchmark.slice_name(benchmark.Options()) == "terminalbench"
    assert benchmark.slice_name(benchmark.Options(agent="codex")) == "terminalbench-codex"


def test_tasks_keep_their_canonical_index() -> None:
    assert len(benchmark.load_tasks(benchmark.Options())) == 24
    chosen = benchmark.load_tasks(benchmark.Options(tasks="dna-insert, mailman"))
    assert [(t.task_index, t.task_id) for t in chosen] == [(15, "dna-insert"), (9, "mailman")]
    with pytest.raises(ValidationError, match="unknown task"):
        benchmark.Options(tasks=["no-such-task"])


def test_a_passing_trial(tmp_path, cache, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-VALUEVALUEVALUE")
    fake = Harbor(tmp_path, {})
    result = attempt(tmp_path, fake, cache, tasks=["mailman"])
    assert result.verdict.success and result.verdict.score == 1.0
    assert result.verdict.raw_eval_output == ""
    assert result.output == "Done." and result.prompt == "FAKE INSTRUCTION"
    usage = result.usage
    assert usage is not None
    assert (usage.input_tokens, usage.cached_tokens, usage.thinking_tokens, usage.output_tokens) == (1000, 200, 0, 50)
    [call] = fake.calls()
    argv = call["argv"]
    assert argv[:5] == ["run", "-d", "terminal-bench/terminal-bench-2", "-i", "terminal-bench/mailman"]
    for pair in (["-a", "terminus-2"], ["-m", "anthropic/claude-sonnet-4-6"], ["-e", "docker"], ["-k", "1"],
                 ["--job-name", "mailman-attempt-1"], ["--ak", "max_turns=100"], ["--ak", "temperature=0.7"],
                 ["--ae", "OPENAI_API_KEY=${OPENAI_API_KEY}"]):
        assert any(argv[i:i + 2] == pair for i in range(len(argv))), pair
    assert "sk-live-VALUEVALUEVALUE" not in json.dumps(argv) and call["has_key"]
    assert result.verdict.details["harbor_returncode"] == 0


def test_a_failing_trial(tmp_path, cache) -> None:
    fake = Harbor(tmp_path, {"mailman": "fail"})
    result = attempt(tmp_path, fake, cache, tasks=["mailman"])
    assert not result.verdict.success and result.verdict.score == 0.0
    assert result.verdict.raw_eval_output.endswith("FAILED test_fake.py::test_x - AssertionError\n1 failed")
    assert "FAILED test_fake.py::test_x - AssertionError" in result.verdict.details["error_signals"]
    assert result.verdict.details["last_command"] == "echo ok"


@pytest.mark.parametrize(("outcome", "message"), [
    ("infra", "no reward (AgentTimeoutError: fake timeout)"),
    ("crash", "exit code 1): Traceback (most recent call last):\nDockerError: daemon not running"),
    ("missing", "no result.json (exit code 0)"),
    ("hang", "did not finish within 1 s"),
])
def test_harbor_failures_are_errors_not_wrong_answers(tmp_path, cache, outcome, message) -> None:
    fake = Harbor(tmp_path, {"mailman": outcome})
    with pytest.raises(AgentRunError) as caught:
        # 1 s only where the timeout is the point: a loaded machine may start the fake slowly.
        attempt(tmp_path, fake, cache, tasks=["mailman"], harbor_timeout_s=1 if outcome == "hang" else 60)
    assert message in str(caught.value)


def test_seq_at_k_context_goes_to_a_private_copy_and_the_cache_is_untouched(tmp_path, cache) -> None:
    shared = cache / "terminal-bench" / "mailman" / "abc123" / "instruction.md"
    before = shared.read_bytes(), shared.stat().st_mtime_ns
    fake = Harbor(tmp_path, {"mailman": "fail"})
    history = [HistoryItem(1, "I think it works.", "FEEDBACK-ONE")]
    attempt(tmp_path, fake, cache, seq=True, index=2, history=history, tasks=["mailman"])
    [call] = fake.calls()
    assert "-d" not in call["argv"] and "-p" in call["argv"]
    copy = Path(call["argv"][call["argv"].index("-p") + 1])
    assert copy.is_relative_to(tmp_path / "jobs" / "terminalbench" / "x" / "mailman" / "attempt-2")
    assert (copy / "tests" / "test_outputs.py").exists()
    assert call["instruction"] == (
        "Do mailman well.\n\n" + text.HEADER + "\n\nThis is attempt 2 of 3. Review your previous attempt(s) "
        "and the feedback below, then provide an improved answer.\n\n<PreviousAttempt 1>\nI think it works.\n"
        "</PreviousAttempt 1>\n\n<Feedback 1>\nFEEDBACK-ONE\n</Feedback 1>\n")
    assert (shared.read_bytes(), shared.stat().st_mtime_ns) == before


def test_seq_at_k_without_a_task_package_is_an_error(tmp_path) -> None:
    fake = Harbor(tmp_path, {})
    with pytest.raises(AgentRunError, match="no task package for mailman"):
        attempt(tmp_path, fake, tmp_path / "empty-cache", seq=True, tasks=["mailman"])
    assert fake.calls() == []


def run_variant(tmp_path: Path, db: Path, fake: Harbor, cache: Path, **keys: Any) -> None:
    spec = runspec.load(write_variant(tmp_path, benchmark="terminalbench", model="anthropic/claude-sonnet-4-6",
                                      options=options(tmp_path, fake, cache, tasks=["mailman", "dna-insert"]),
                                      **keys))
    engine.run(spec, db)


@pytest.mark.parametrize("mode", ["binary", "raw", "retry_diagnostics"])
def test_seq_at_k_delivers_the_chosen_mode_and_nothing_else(tmp_path, db, cache, mode) -> None:
    fake = Harbor(tmp_path, {"mailman#1": "fail", "mailman#2": "fail", "dna-insert": "pass"})
    run_variant(tmp_path, db, fake, cache, metric="seq@k", k=3, feedback_mode=mode)
    seen = {(c["task"], c["attempt"]): c["instruction"] for c in fake.calls()}
    assert sorted(seen) == [("dna-insert", 1), ("mailman", 1), ("mailman", 2), ("mailman", 3)]
    third = seen[("mailman", 3)]
    assert "This is attempt 3 of 3." in third and "<Feedback 2>" in third
    assert "--- Agent Step" not in third  # never the whole trajectory
    assert ("FAILED test_fake.py::test_x" in third) == (mode != "binary")
    assert ("retry_focus:" in third) == (mode == "retry_diagnostics")
    assert (text.BINARY in third) == (mode == "binary")
    with duckdb.connect(str(db), read_only=True) as con:
        attempts = con.execute("SELECT task_index, attempt_index, status, success FROM attempts "
                               "ORDER BY 1, 2").fetchall()
        calls = con.execute("SELECT role, input_tokens, cached_tokens, thinking_tokens, output_tokens, cost_usd "
                            "FROM calls").fetchall()
        runs = con.execute("SELECT run_id FROM runs").fetchall()
    assert attempts == [(9, 1, "ok", False), (9, 2, "ok", False), (9, 3, "ok", True), (15, 1, "ok", True)]
    assert len(calls) == 4 and all(c[:5] == ("actor", 1000, 200, 0, 50) for c in calls)
    assert calls[0][5] == pytest.approx((800 * 3.0 + 200 * 0.30 + 50 * 15.0) / 1e6)
    assert runs == [(f"terminalbench/seqk/anthropic__claude-sonnet-4-6/harbor/{mode}",)]


def test_pass_at_k_runs_the_dataset_and_a_crash_is_an_error(tmp_path, db, cache) -> None:
    fake = Harbor(tmp_path, {"mailman#1": "crash", "dna-insert": "fail"})
    run_variant(tmp_path, db, fake, cache, metric="pass@k", k=2)
    assert all(c["instruction"] is None and "-d" in c["argv"] for c in fake.calls())
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT task_index, attempt_index, status, success, error->>'type', error->>'stage' "
                           "FROM attempts ORDER BY 1, 2").fetchall()
    assert rows == [(9, 1, "error", None, "AgentRunError", "run_attempt"), (9, 2, "ok", True, None, None),
                    (15, 1, "ok", False, None, None), (15, 2, "ok", False, None, None)]


@pytest.mark.parametrize(("given", "expected"), [
    ("key sk-FAKEFAKEFAKE123 here", "key [redacted_secret] here"),
    ("export OPENROUTER=sk-or-v1-abcdefabcdef", "export OPENROUTER=[redacted_secret]"),
    ("AKIA" + "ABCDEFGHIJKLMNOP", "[redacted_secret]"),  # built, so no scanner mistakes it for a key
    ("error-handling-module", "error-handling-module"),
    ("vendor-specific-options", "vendor-specific-options"),
    ("task-1234567890", "task-1234567890"),
    ("desk-lamp-controller", "desk-lamp-controller"),
])
def test_redaction_matches_whole_tokens(given: str, expected: str) -> None:
    assert text.redact(given) == expected


def test_the_values_of_passed_variables_are_redacted(monkeypatch) -> None:
    monkeypatch.setenv("MY_TOKEN", "plainlookingvalue42")
    assert text.redact("got plainlookingvalue42!", ["MY_TOKEN"]) == "got [redacted_secret]!"


def test_feedback_texts(tmp_path, cache) -> None:
    fake = Harbor(tmp_path, {"mailman": "fail"})
    result = attempt(tmp_path, fake, cache, tasks=["mailman"])
    task = Task(9, "mailman", "")

    def feedback(mode: str) -> str:
        return asyncio.run(benchmark.feedback(task, result.output, result.verdict, context(benchmark, mode=mode)))

    assert feedback("binary") == text.BINARY
    assert feedback("raw") == result.verdict.raw_eval_output
    diagnostics = feedback("retry_diagnostics")
    assert diagnostics.startswith("task=mailman\n\nverifier_status:\ncollected 1 item\n")
    assert "last_command: echo ok\nlast_output:\nok\n" in diagnostics
    assert "- FAILED test_fake.py::test_x - AssertionError" in diagnostics
    assert diagnostics.endswith(text.RETRY_FOCUS[-1])


def test_seqk_run_from_the_command_line_exports_the_harbor_runs(tmp_path, db, cache) -> None:
    from typer.testing import CliRunner

    from seqk.cli import app

    fake = Harbor(tmp_path, {"mailman#1": "fail"})
    path = write_variant(tmp_path, benchmark="terminalbench", metric="seq@k", k=2, feedback_mode="raw",
                         model="anthropic/claude-sonnet-4-6",
                         options=options(tmp_path, fake, cache, tasks=["mailman"]))
    result = CliRunner().invoke(app, ["run", str(path), "--db", str(db), "--no-upload"])
    assert result.exit_code == 0, result.output
    assert "1 passed, 0 failed, 0 with errors" in result.output
    exported = tmp_path / "terminalbench" / "seqk" / "anthropic__claude-sonnet-4-6" / "harbor" / "raw"
    second = json.loads((exported / "task-9" / "attempt-2.json").read_text())
    assert second["judge"]["success"] is True
    assert (second["actor"]["input_tokens"], second["actor"]["output_tokens"]) == (1000, 50)
    assert "FAILED test_fake.py::test_x" in second["judge"]["details"]["delivered_instruction"]


def test_codex_gets_its_auth_file_by_path_and_no_terminus_options(tmp_path, cache) -> None:
    fake = Harbor(tmp_path, {})
    attempt(tmp_path, fake, cache, tasks=["mailman"], agent="codex", codex_auth_json=str(tmp_path / "auth.json"))
    argv = fake.calls()[0]["argv"]
    assert argv[argv.index("-a"):argv.index("-a") + 2] == ["-a", "codex"]
    assert "CODEX_AUTH_JSON_PATH=${CODEX_AUTH_JSON_PATH}" in argv
    assert "CODEX_FORCE_AUTH_JSON=${CODEX_FORCE_AUTH_JSON}" in argv
    assert "--ak" not in argv and str(tmp_path / "auth.json") not in argv


def test_the_harbor_command_is_an_option(tmp_path, monkeypatch) -> None:
    from benchmarks.terminalbench import harbor

    assert harbor.executable("/opt/harbor --verbose") == ["/opt/harbor", "--verbose"]
    monkeypatch.setenv("PATH", str(tmp_path))
    assert harbor.executable("auto") == ["uvx", "harbor"]
    (tmp_path / "harbor").write_text("#!/bin/sh\n")
    (tmp_path / "harbor").chmod(0o755)
    assert harbor.executable("auto") == ["harbor"]


LOCAL_TASKS = FAKE_HARBOR.parent / "local_tasks"


def test_local_task_packages_run_without_docker_through_the_shipped_fake_harbor(tmp_path, db) -> None:
    fake = Harbor(tmp_path, {"count-lines#1": "fail", "hello-file": "pass"})
    spec = runspec.load(write_variant(
        tmp_path, benchmark="terminalbench", metric="seq@k", k=2, model="mock/echo", feedback_mode="raw",
        options={"local_tasks": str(LOCAL_TASKS), "harbor_executable": fake.executable,
                 "jobs_root": str(tmp_path / "jobs")}))
    assert spec.run_id == "terminalbench-local-local_tasks/seqk/mock__echo/harbor/raw"
    assert [(t.task_index, t.task_id) for t in spec.tasks] == [(1, "count-lines"), (2, "hello-file")]
    assert spec.tasks[0].prompt == (LOCAL_TASKS / "count-lines" / "instruction.md").read_text()
    engine.run(spec, db)
    calls = {(c["task"], c["attempt"]): c for c in fake.calls()}
    assert sorted(calls) == [("count-lines", 1), ("count-lines", 2), ("hello-file", 1)]
    # Every attempt runs a package by path (-p), never a registry dataset: under seq@k a private
    # copy whose instruction carries the context; the shipped package is left as it was.
    assert all("-d" not in c["argv"] for c in calls.values())
    assert (LOCAL_TASKS / "count-lines" / "instruction.md").read_text().count("attempt") == 0
    second = calls[("count-lines", 2)]
    assert Path(second["argv"][second["argv"].index("-p") + 1]).is_relative_to(tmp_path / "jobs")
    assert "This is attempt 2 of 2." in second["instruction"] and "FAILED test_fake.py::test_x" in second["instruction"]
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT task_index, attempt_index, success FROM attempts ORDER BY 1, 2").fetchall() == [
            (1, 1, False), (1, 2, True), (2, 1, True)]
    # pass@k runs the shipped package itself.
    engine.run(runspec.load(write_variant(
        tmp_path, "p.yaml", benchmark="terminalbench", metric="pass@k", k=1, model="mock/echo",
        options={"local_tasks": str(LOCAL_TASKS), "harbor_executable": fake.executable, "tasks": ["hello-file"],
                 "jobs_root": str(tmp_path / "jobs")})), db)
    argv = fake.calls()[-1]["argv"]
    assert Path(argv[argv.index("-p") + 1]) == (LOCAL_TASKS / "hello-file").resolve()


def test_local_tasks_are_real_harbor_packages():
    for package in (p for p in LOCAL_TASKS.iterdir() if p.is_dir()):
        for part in ("instruction.md", "task.toml", "environment/Dockerfile", "tests/test.sh",
                     "tests/test_outputs.py", "solution/solve.sh"):
            assert (package / part).is_file(), f"{package.name}/{part}"


def test_an_unknown_local_task_is_refused_naming_the_ones_there(tmp_path) -> None:
    with pytest.raises(ValidationError, match="unknown task.*mailman; known: count-lines, hello-file"):
        benchmark.Options(local_tasks=str(LOCAL_TASKS), tasks=["mailman"])
    with pytest.raises(ValidationError, match="no task package"):
        benchmark.Options(local_tasks=str(tmp_path))
