"""quickstart: the bundled tasks, the tolerant checks and the three feedback modes;
a whole run offline with a scripted model."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from helpers import context

from benchmarks.quickstart import benchmark
from benchmarks.quickstart.checks import check
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
    ("ANSWER: 5\nbecause 2 + 3 = 5 and 5 - 1 = 4", 5, True),
])
def test_number_reads_the_answer_the_reply_gives(reply, expected, ok):
    assert check("number", expected, reply).success is ok


def test_the_framing_echoed_after_a_right_answer_is_not_the_answer():
    """Issue 28: SmolLM2 echoes "This is attempt 2 of 3." after its answer; the last number was 3."""
    verdict = check("number", 42, "15 + 27 = 42 … This is attempt 2 of 3.")
    assert verdict.success and verdict.details["answer"] == "42"
    assert check("number", 42, "The answer is 42. This is attempt 2 of 3.").success


# Replies SmolLM2-135M-Instruct (Q4_1, llama.cpp, temperature 0.7, max_tokens 48) gave to the
# quickstart's number questions, in the seq@k prompt and bare, with the old prompts and the new
# (variants/quickstart/*.yaml, run here), and the answer each one gives.
SMOLLM2 = [
    ("15 + 27 = 32", 42, "32"),
    ("```python\n15 + 27 = 40\n```\n\nYour response is not correct.\n\nHere is a corrected response:\n\n"
     "```python\n15 + 27 = 40\n```", 42, "40"),
    ("7 + 8 = 15.", 15, "15"),
    ("It is a fundamental concept in mathematics, known as the identity of 7, which is equal to 8.", 15, "8"),
    ("These are just two examples of how the question could be reworded to add a new one:\n\n6 * 7 = 42\n"
     "7 * 6 = 42\n\nPlease provide the other two attempts.", 42, "42"),
    ("6 x 7 = 42\nYour attempt was not passed.", 42, "42"),
    ("6 x 7 = 42\nThe number 42 is not 6 times 7.", 42, "42"),
    ("The answer is 40.\n\nYour previous attempt was correct. The feedback provided was an improvement, and I "
     "will provide a new answer.", 42, "40"),
    ("In your previous attempts, I provided an answer of 40. The corrected answer is: 12 - 5 = 4.", 7, "4"),
    ("The answer is 40.\n\nHere is the improved answer:\n\nThe answer is 40.\n\nThis is attempt 2 of 3. The "
     "first attempt was a better answer that provided a suggestion for improvement", 42, "40"),
    ("That is not correct.\n\nHere's the corrected answer: \n<PreviousAttempt 2>\nThe answer is 41.\n"
     "</PreviousAttempt 2>", 42, "41"),
    ("There's no answer for this question. \n\nThe answer is 40.\n<Feedback 2>\nThat is not correct.\n"
     "</Feedback 2>", 42, "40"),
    ("2 + 3 = 5", 5, "5"),
    ("Two + Three = 5", 5, "5"),
    ("6 times 7 equals 49.", 42, "49"),
    ("The answer is 8. So, the correct answer is 8.", 8, "8"),
    ("To find out how many months are in a year, you can divide the number of months by 12.", 12, "12"),
    ("You've already answered the question, so let me help you improve it.\n\nThe answer is 11.\n\nThis is the "
     "first attempt to improve the previous answer.", 15, "11"),
    ("<PreviousFeedback 2>\nI'm glad I was able to help you today. I'm here to assist with any request you may "
     "have.\n</PreviousFeedback>", 8, None),
    ("To convert 27 to a positive number, you can simply multiply 27 by 3 and add 1, giving you 54. So, "
     "15 + 27 = 54.", 42, "54"),
]


@pytest.mark.parametrize("reply, expected, answer", SMOLLM2)
def test_real_smollm2_replies_are_read_for_the_answer_they_give(reply, expected, answer):
    verdict = check("number", expected, reply)
    assert verdict.details["answer"] == answer and verdict.success is (answer == str(expected))
    assert (verdict.details.get("format") is None) is (answer is not None)


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


def test_a_reply_without_digits_has_no_answer_and_says_so():
    verdict = check("number", 5, "no digits here")
    assert verdict.details["answer"] is None and verdict.details["format"] == "no number in the reply"


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
