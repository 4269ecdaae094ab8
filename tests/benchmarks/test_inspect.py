"""benchmark: inspect runs inspect_ai task files as seq@k and pass@k: a task with match() and one
with choice() give, attempt by attempt, the verdict inspect's own scorer gives on the same output;
a scorer seqk cannot grade as inspect would is refused in one line naming it."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest
from helpers import rows, write_variant
from inspect_ai.model import ModelName, ModelOutput
from inspect_ai.scorer import CORRECT, Target
from inspect_ai.scorer import choice as inspect_choice
from inspect_ai.scorer import match as inspect_match
from inspect_ai.solver import TaskState
from inspect_ai.solver._multiple_choice import parse_answers, set_choices_based_on_generated_response

from benchmarks.inspect import benchmark
from seqk import models
from seqk.config import runspec
from seqk.errors import ConfigError
from seqk.run import engine
from seqk.verifiers.scorers import ChoiceScorer, MatchScorer

TASKS = '''
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser
from inspect_ai.scorer import choice, f1, includes, match, model_graded_qa
from inspect_ai.solver import generate, multiple_choice

SUMS = [Sample(id=f"s{i}", input=f"What is {i} + {i}?", target=str(2 * i), metadata={"i": i}) for i in range(1, 7)]
PICKS = [Sample(id=f"p{i}", input=f"Which is {i} + 1?", choices=[str(i), str(i + 1), str(i + 2)],
                target="B") for i in range(1, 7)]

@task
def sums():
    return Task(dataset=SUMS, solver=generate(), scorer=match(numeric=True))

@task
def sums_begin():
    return Task(dataset=SUMS, solver=generate(), scorer=match("begin", ignore_case=False, numeric=True))

@task
def picks():
    return Task(dataset=PICKS, solver=multiple_choice(), scorer=choice())

@task
def graded():
    return Task(dataset=SUMS, solver=generate(), scorer=model_graded_qa())

@task
def two_scorers():
    return Task(dataset=SUMS, solver=generate(), scorer=[match(), includes()])

@task
def custom_f1():
    return Task(dataset=SUMS, solver=generate(), scorer=f1(answer_fn=lambda s: s))

@task
def boxed():
    return Task(dataset=SUMS, solver=generate(), scorer=match(), sandbox="docker")

@task
def chat():
    return Task(dataset=[Sample(input=[ChatMessageSystem(content="Be terse."), ChatMessageUser(content="2+2?")],
                                target="4")], scorer=includes())
'''

# What the stand-in writes, by attempt: the framing echoed back, a number out of place, a letter
# alone, inspect's ANSWER: forms; each row is graded by inspect's scorer and by seqk's.
REPLIES = {
    "sums": ["I think it is {wrong}.", "{right}", "The answer: {right}. This is attempt 2 of 3."],
    "picks": ["I would say C", "ANSWER: C", "ANSWER: **B**"],
}


@pytest.fixture
def task_file(tmp_path):
    path = tmp_path / "tasks.py"
    path.write_text(TASKS)
    return path


def options(task_file, name, **more):
    return benchmark.Options.model_validate({"task": f"{task_file}@{name}"} | more)


def scripted(kind: str):
    def reply(prompt: str) -> str:
        attempt = prompt.count("<PreviousAttempt")
        if kind == "sums":
            n = int(prompt.split("What is ")[1].split(" +")[0])
            index = min(attempt, 2) if n % 3 else 0  # every third task never right
            return REPLIES[kind][index].format(right=2 * n, wrong=2 * n + 1)
        return REPLIES[kind][min(attempt, 2)]
    return reply


def inspect_verdict(name: str, output: str, target: str, choices: list[str] | None) -> bool:
    state = TaskState(model=ModelName("mockllm/model"), sample_id=1, epoch=1, input="q", messages=[],
                      choices=choices, output=ModelOutput.from_content("mockllm/model", output))
    if name == "picks":
        set_choices_based_on_generated_response(state, parse_answers(state, False))
        scorer = inspect_choice()
    else:
        scorer = inspect_match(numeric=True)
    return asyncio.run(scorer(state, Target(target))).value == CORRECT


@pytest.mark.parametrize("name", ["sums", "picks"])
def test_a_task_runs_as_seq_at_k_with_inspects_verdicts(tmp_path, db, task_file, name):
    models.register_mock("mock/inspect-actor", scripted(name))
    for metric in ("seq@k", "pass@k"):
        variant = write_variant(tmp_path, f"{metric[:-2]}.yaml", benchmark="inspect", metric=metric, k=3,
                                model="mock/inspect-actor", options={"task": f"{task_file}@{name}"})
        spec = runspec.load(variant)
        assert spec.slice_name == f"inspect-{name}" and len(spec.tasks) == 6
        result = engine.run(spec, db)
        assert not result.error_kinds
    tasks = {t.task_index: t for t in benchmark.load_tasks(options(task_file, name))}
    graded = rows(db, "SELECT a.task_index, a.output, a.success FROM attempts a JOIN runs r USING (run_id) "
                      "WHERE r.metric = 'seq@k' ORDER BY 1, a.attempt_index")
    assert len(graded) > 6 and {s for _, _, s in graded} == {True, False}
    for index, output, success in graded:
        reference = tasks[index].answer
        assert success is inspect_verdict(name, output, reference["target"][0], reference.get("choices")), output


def test_samples_become_tasks_with_their_ids_targets_choices_and_metadata(task_file):
    sums = benchmark.load_tasks(options(task_file, "sums"))
    assert [(t.task_index, t.task_id, t.prompt, t.answer["target"]) for t in sums[:2]] == [
        (1, "s1", "What is 1 + 1?", ["2"]), (2, "s2", "What is 2 + 2?", ["4"])]
    assert sums[0].meta == {"metadata": {"i": 1}}
    picks = benchmark.load_tasks(options(task_file, "picks"))
    assert picks[0].prompt == ("Answer the following multiple choice question. The entire content of your "
                               "response should be of the following format: 'ANSWER: $LETTER' (without "
                               "quotes) where LETTER is one of A,B,C.\n\nWhich is 1 + 1?\n\nA) 1\nB) 2\nC) 3")
    assert picks[0].answer["choices"] == ["1", "2", "3"]
    chat = benchmark.load_tasks(options(task_file, "chat"))
    assert chat[0].prompt == "System: Be terse.\n\nUser: 2+2?"


def test_the_scorers_parameters_are_carried_over(task_file):
    assert benchmark.scorer_of(options(task_file, "sums_begin")) == MatchScorer(
        location="begin", ignore_case=False, numeric=True)
    assert benchmark.scorer_of(options(task_file, "picks")) == ChoiceScorer(lone_letter=False, multiple=False)
    assert benchmark.verifier_of(options(task_file, "picks")) == "choice"


@pytest.mark.parametrize("name, message", [
    ("graded", "task graded's scorer inspect_ai/model_graded_qa is not one seqk can grade as inspect would; "
               "seqk maps inspect's match, includes, pattern, answer, choice, exact, f1"),
    ("two_scorers", "task two_scorers has 2 scorers (inspect_ai/match, inspect_ai/includes)"),
    ("custom_f1", "task custom_f1's f1 scorer takes an answer_fn, which seqk does not run"),
    ("boxed", "task boxed runs its samples in a sandbox"),
    ("nowhere", "inspect_ai cannot load"),
])
def test_what_seqk_cannot_carry_over_is_refused_in_one_line(task_file, name, message):
    with pytest.raises(ConfigError) as caught:
        benchmark.load_tasks(options(task_file, name))
    (issue,) = caught.value.issues
    assert issue.field == "options.task" and message in issue.message and "\n" not in issue.message


def test_without_inspect_ai_the_extra_is_named(monkeypatch, task_file):
    monkeypatch.setitem(sys.modules, "inspect_ai._eval.loader", None)
    with pytest.raises(ConfigError, match=r"pip install 'seqk\[inspect\]'"):
        benchmark.load_tasks(options(task_file, "sums", task_args={"x": json.dumps(1)}))
