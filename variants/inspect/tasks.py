"""The two data sets of variants/dataset/ as inspect_ai tasks, to run with `benchmark: inspect`
(variants/inspect/*.yaml) or with inspect itself (`inspect eval variants/inspect/tasks.py@arithmetic`)."""

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import Sample, csv_dataset, json_dataset
from inspect_ai.scorer import choice, match
from inspect_ai.solver import generate, multiple_choice

DATA = Path(__file__).resolve().parent.parent / "dataset" / "data"


def arithmetic_sample(record: dict) -> Sample:
    return Sample(id=record["id"], target=str(record["answer"]),
                  input=f"{record['question']}\n\nEnd your reply with a line ANSWER: <the number>.")


@task
def arithmetic() -> Task:
    """40 questions with a number for an answer; the reply's last number must be it."""
    return Task(dataset=json_dataset(f"{DATA}/arithmetic.jsonl", arithmetic_sample),
                solver=generate(), scorer=match(numeric=True))


def choices_sample(record: dict) -> Sample:
    return Sample(id=record["id"], input=record["question"], target=record["answer"],
                  choices=[record[letter] for letter in "ABCD"])


@task
def choices() -> Task:
    """36 multiple-choice questions about numbers; the letter after ANSWER: must be the right one."""
    return Task(dataset=csv_dataset(f"{DATA}/choices.csv", choices_sample),
                solver=multiple_choice(), scorer=choice())
