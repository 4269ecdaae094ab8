"""An inspect_ai task read into seqk's terms: its samples as tasks, its scorer as a
seqk.verifiers scorer with the same parameters. Everything that cannot be carried over faithfully
(another scorer, several scorers, a sandbox, a scorer's custom answer function) is refused in
one line, before any call is made.

This reads inspect's task loader and registry (`inspect_ai._eval.loader.load_tasks`,
`inspect_ai._util.registry`), written against inspect-ai 0.3.285 (the `inspect` extra pins the
0.3 series).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchmarks._common.samples import reference_answer
from seqk.benchmark import Task
from seqk.errors import ConfigError, ConfigIssue
from seqk.verifiers.patterns import choice_prompt, target_positions
from seqk.verifiers.scorers import (
    AnswerScorer,
    ChoiceScorer,
    ExactScorer,
    F1Scorer,
    IncludesScorer,
    MatchScorer,
    RegexScorer,
)

MAPPED = ("match", "includes", "pattern", "answer", "choice", "exact", "f1")
"""inspect's built-in scorers that seqk.verifiers grades with, rule for rule."""


@dataclass(frozen=True)
class Loaded:
    """What seqk takes from one inspect task."""

    name: str
    tasks: tuple[Task, ...]
    scorer: Any


def _issue(message: str, field: str = "options.task") -> ConfigError:
    return ConfigError("options", [ConfigIssue("C08", field, message)])


def load(spec: str, task_args: dict[str, Any]) -> Loaded:
    """The inspect task `spec` names, read into seqk's terms; ConfigError saying why not."""
    try:
        from inspect_ai._eval.loader import load_tasks
    except ImportError:
        raise _issue("benchmark inspect needs inspect_ai: pip install 'seqk[inspect]'") from None
    try:
        found = load_tasks([spec], task_args)
    except Exception as exc:  # noqa: BLE001 - a missing file, a typo, the task's own error
        raise _issue(f"inspect_ai cannot load {spec!r}: {type(exc).__name__}: {str(exc)[:300]}") from None
    if len(found) != 1:
        names = ", ".join(t.name for t in found) or "none"
        raise _issue(f"{spec!r} names {len(found)} tasks ({names}): name one, as path/to/file.py@task_name")
    task = found[0]
    if task.sandbox is not None:
        raise _issue(f"task {task.name} runs its samples in a sandbox ({task.sandbox}), which seqk does not provide")
    scorer = map_scorer(task, multiple_choice_solver(task.solver))
    tasks = tuple(sample_task(i, sample, scorer) for i, sample in enumerate(task.dataset, start=1))
    if not tasks:
        raise _issue(f"task {task.name} has no samples")
    return Loaded(task.name, tasks, scorer)


def multiple_choice_solver(solver: Any) -> bool | None:
    """multiple_correct of the task's multiple_choice solver (None: it has none)."""
    from inspect_ai._util.registry import is_registry_object, registry_info, registry_params

    for one in [solver, *getattr(solver, "_solvers", [])]:
        if is_registry_object(one) and registry_info(one).name.endswith("multiple_choice"):
            return bool(registry_params(one).get("multiple_correct", False))
    return None


def map_scorer(task: Any, multiple: bool | None) -> Any:
    """The seqk.verifiers scorer that grades as the task's one built-in scorer does."""
    from inspect_ai._util.registry import registry_info, registry_params

    scorers = list(task.scorer or [])
    if len(scorers) != 1:
        names = ", ".join(registry_info(s).name for s in scorers) or "none"
        raise _issue(f"task {task.name} has {len(scorers)} scorers ({names}); seqk grades each attempt "
                     "with one: give the task one of inspect's " + ", ".join(MAPPED))
    full = registry_info(scorers[0]).name
    name = full.removeprefix("inspect_ai/")
    params = registry_params(scorers[0])
    if full != f"inspect_ai/{name}" or name not in MAPPED:
        raise _issue(f"task {task.name}'s scorer {full} is not one seqk can grade as inspect would; "
                     f"seqk maps inspect's {', '.join(MAPPED)}")
    if name == "f1" and params.get("answer_fn") is not None:
        raise _issue(f"task {task.name}'s f1 scorer takes an answer_fn, which seqk does not run")
    if name == "match":
        return MatchScorer(**params)
    if name == "includes":
        return IncludesScorer(**params)
    if name == "pattern":
        return RegexScorer(**params)
    if name == "answer":
        return AnswerScorer(**params)
    if name == "choice":
        return ChoiceScorer(lone_letter=False, multiple=bool(multiple))
    if name == "exact":
        return ExactScorer()
    return F1Scorer(stop_words=params.get("stop_words"))


def _input_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    # A conversation: seqk sends one message, so the turns are written out with their roles.
    turns = [(str(getattr(m, "role", "user")), str(getattr(m, "text", ""))) for m in value]
    if len(turns) == 1 and turns[0][0] == "user":
        return turns[0][1]
    return "\n\n".join(f"{role.title()}: {text}" for role, text in turns)


def sample_task(index: int, sample: Any, scorer: Any) -> Task:
    """One sample as a seqk task: its input (with its choices, in inspect's multiple-choice
    wording), its target(s), choices and id; its metadata kept with the task."""
    if sample.sandbox is not None or sample.files or sample.setup:
        raise _issue(f"sample {sample.id or index} needs a sandbox, files or a setup script, which seqk "
                     "does not provide")
    targets = [sample.target] if isinstance(sample.target, str) else list(sample.target)
    choices = list(sample.choices) if sample.choices else None
    prompt = _input_text(sample.input)
    if choices is not None:
        prompt = choice_prompt(prompt, choices, multiple=getattr(scorer, "multiple", False) is True)
        if isinstance(scorer, ChoiceScorer):
            try:
                target_positions(targets, len(choices))
            except ValueError as exc:
                raise _issue(f"sample {sample.id or index}: {exc}") from None
    meta: dict[str, Any] = {"metadata": sample.metadata} if sample.metadata else {}
    task_id = str(sample.id) if sample.id is not None else str(index)
    return Task(task_index=index, task_id=task_id, prompt=prompt,
                answer=reference_answer([str(t) for t in targets], [str(c) for c in choices] if choices else None),
                meta=meta)

