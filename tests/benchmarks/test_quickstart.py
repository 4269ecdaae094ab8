"""quickstart: the bundled tasks, the tolerant checks and the three feedback modes;
a whole run offline with a scripted model."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from helpers import context

from benchmarks.quickstart import benchmark
from benchmarks.quickstart.checks import check, last_number
from seqk import models
from seqk.benchmark import NoOptions, Task
from seqk.config import runspec
from seqk.run import engine

ROOT = Path(__file__).resolve().parents[2]


TASKS = benchmark.load_tasks(NoOptions())


def verify(task: Task, output: str):
    return asyncio.run(benchmark.verify(task, output, context(benchmark)))


def test_tasks_are_numbered_from_one_with_unique_ids():
    assert [t.task_index for t in TASKS] == list(range(1, len(TASKS) + 1))
    assert len({t.task_id for t in TASKS}) == len(TASKS)
    assert 10 <= len(TASKS) <= 20


@pytest.mark.parametrize("reply, expected, ok", [
    ("2 + 3 = 5", 5, True),
    ("5", 5, True),
    ("The answer is 5.", 5, True),
    ("2 + 3 = 6", 5, False),
    ("five", 5, False),
    ("1,000 apples", 1000, True),
])
def test_number_takes_the_last_number(reply, expected, ok):
    assert check("number", expected, reply).success is ok


def test_phrase_is_whole_words_in_any_case_and_spacing():
    assert check("phrase", "blue moon", "Blue   moon!").success
    assert not check("phrase", "Rome", "Romeo").success


def test_yesno_takes_the_first_yes_or_no():
    assert check("yesno", "no", "No, 7 is odd. Yes, really.").success
    assert not check("yesno", "no", "Yes. No.").success
    assert not check("yesno", "no", "Nothing to say").success


def test_an_unknown_check_is_refused():
    with pytest.raises(ValueError, match="unknown check"):
        check("regex", "x", "x")


def test_last_number_of_a_reply_without_digits_is_none():
    assert last_number("no digits here") is None


def test_every_task_passes_with_its_expected_answer_and_fails_with_nonsense():
    for task in TASKS:
        assert verify(task, str(task.answer.expected)).success, task.task_id
        assert not verify(task, "I am not sure.").success, task.task_id


def test_feedback_modes():
    task = TASKS[0]
    verdict = verify(task, "4")
    say = lambda mode: asyncio.run(benchmark.feedback(task, "4", verdict, context(benchmark, mode=mode)))  # noqa: E731
    assert say("binary") == "That is not correct."
    assert say("hint").startswith("That is not correct. Hint: ")
    assert str(task.answer.expected) in say("expected")
    assert benchmark.feedback_mode("expected").shows_grading_info
    assert not benchmark.feedback_mode("hint").shows_grading_info


def test_no_hint_gives_the_answer_away():
    for task in TASKS:
        expected = re.escape(str(task.answer.expected))
        assert not re.search(rf"\b{expected}\b", task.meta["hint"], re.IGNORECASE), task.task_id


@pytest.mark.parametrize("variant", ["passk.yaml", "seqk.yaml"])
def test_the_quickstart_variants_run_offline_with_a_scripted_model(variant, tmp_path):
    answers = {t.prompt: str(t.answer.expected) for t in TASKS}
    models.register_mock("mock/quickstart",
                         lambda prompt: next(a for p, a in answers.items() if prompt.startswith(p)))
    spec = runspec.load(ROOT / "variants" / "quickstart" / variant,
                        overrides={"model": "mock/quickstart"})
    result = engine.run(spec, tmp_path / "q.duckdb")
    assert result.tasks_passed == len(TASKS)
