"""Verifiers chosen by name, with their parameters, as a variant's `scorer:` writes them:

    scorer: numeric                                  # a name alone: its defaults
    scorer: {numeric: {tolerance: 0.01}}             # a name and its parameters
    scorer: {regex: "ANSWER: (\\w+)"}                # regex: the pattern alone
    scorer: {python: "my_grader:check"}              # python: module:function (or file.py:function)
    scorer: {llm_rubric: {column: rubric}}           # the judge grades against a rubric

`score` grades one reply against its `Reference` (the row's targets, choices and rubric). A
`python` function is called as `function(output, reference)`, sync or async, and returns a bool
or a seqk.benchmark.Verdict; whatever it raises is a judge error of the attempt, never a wrong
answer.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from seqk.benchmark import RoleClient, Verdict
from seqk.errors import JudgeError
from seqk.verifiers.base import verdict
from seqk.verifiers.judging import llm_rubric
from seqk.verifiers.numbers import numeric
from seqk.verifiers.patterns import answer, choice, regex
from seqk.verifiers.structured import json_field
from seqk.verifiers.text import Location, exact, f1, includes, match


@dataclass(frozen=True)
class Reference:
    """What a reply is graded against: one row's grading data."""

    target: list[str]
    """The right answers (any one passes; for `choice`, the letters)."""
    choices: list[str] | None = None
    """The choices of a multiple-choice row, in the order the prompt letters them."""
    rubric: str | list[str] | None = None
    """The rubric `llm_rubric` grades against (a list: one criterion each)."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """The row's other fields, for a `python` scorer."""


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str
    """The scorer's name."""


class ExactScorer(_Spec):
    """The reply, normalised (case, punctuation, articles, whitespace), equals a target."""

    kind: Literal["exact"] = "exact"


class IncludesScorer(_Spec):
    """A target appears in the reply."""

    kind: Literal["includes"] = "includes"
    ignore_case: bool = True
    """Compare without case."""


class MatchScorer(_Spec):
    """A target at the reply's end (or elsewhere), as inspect's match()."""

    kind: Literal["match"] = "match"
    location: Location = "end"
    """Where the target must stand: begin, end, any, or exact (the whole reply)."""
    ignore_case: bool = True
    """Compare without case."""
    numeric: bool = False
    """Compare the number there (to 5 significant digits) instead of the text."""


class RegexScorer(_Spec):
    """A capture group of the pattern's first match equals a target."""

    kind: Literal["regex"] = "regex"
    pattern: str
    """A Python regular expression; with no group the whole match is compared."""
    ignore_case: bool = True
    """Match and compare without case."""
    match_all: bool = False
    """Every group must equal a target, not just one."""

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        import re

        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
        return value


class AnswerScorer(_Spec):
    """What follows the last ANSWER: (a letter, a word or the line) is a target."""

    kind: Literal["answer"] = "answer"
    pattern: Literal["letter", "word", "line"]
    """What to read after ANSWER:."""


class NumericScorer(_Spec):
    """The number the reply states is a target's, within a tolerance."""

    kind: Literal["numeric"] = "numeric"
    tolerance: float = Field(0.0, ge=0)
    """Largest absolute difference that still passes."""
    relative_tolerance: float = Field(0.0, ge=0)
    """Largest difference as a share of the target (0.01: 1%); the wider of the two applies."""


class ChoiceScorer(_Spec):
    """The letters the reply chooses are the target's."""

    kind: Literal["choice"] = "choice"
    lone_letter: bool = True
    """Without an ANSWER: line, read the last choice letter standing alone."""
    multiple: bool | None = None
    """Read several letters after ANSWER: (None: when the target has several)."""


class JsonFieldScorer(_Spec):
    """The value at a field of the reply's JSON object equals a target."""

    kind: Literal["json_field"] = "json_field"
    field: str = Field(min_length=1)
    """A dotted path: answer, result.value, items.0."""


class F1Scorer(_Spec):
    """Token F1 with the best target; passes at a threshold."""

    kind: Literal["f1"] = "f1"
    stop_words: list[str] | None = None
    """Words left out of both sides."""
    threshold: float = Field(1.0, gt=0, le=1)
    """The F1 at which a reply passes (1.0: every token right)."""


class LlmRubricScorer(_Spec):
    """The judge model rules whether the reply meets a rubric."""

    kind: Literal["llm_rubric"] = "llm_rubric"
    column: str | None = None
    """The field holding each row's rubric (a text, or a list of criteria)."""
    text: str | None = None
    """One rubric for every row; {field} names a field of the row, {target} the target."""

    @model_validator(mode="after")
    def _one_source(self) -> LlmRubricScorer:
        if (self.column is None) == (self.text is None):
            raise ValueError("give the rubric as `column` (a field of each row) or `text`, exactly one")
        return self


class PythonScorer(_Spec):
    """Your own function: function(output, reference) -> bool | Verdict."""

    kind: Literal["python"] = "python"
    function: str
    """module:function, or path/to/file.py:function (relative to the working directory)."""

    @field_validator("function")
    @classmethod
    def _loads(cls, value: str) -> str:
        load_function(value)
        return value


SCORERS: dict[str, type[_Spec]] = {
    "exact": ExactScorer, "includes": IncludesScorer, "match": MatchScorer, "regex": RegexScorer,
    "answer": AnswerScorer, "numeric": NumericScorer, "choice": ChoiceScorer,
    "json_field": JsonFieldScorer, "f1": F1Scorer, "llm_rubric": LlmRubricScorer, "python": PythonScorer,
}
"""Every scorer, by the name a variant writes."""
_SHORT = {"regex": "pattern", "answer": "pattern", "python": "function", "json_field": "field"}
"""The parameter a scorer's name may be given alone: {python: "m:f"}."""


def _spelled(value: Any) -> Any:
    """`numeric`, `{numeric: {...}}` or `{python: "m:f"}` as the tagged form pydantic reads."""
    if isinstance(value, BaseModel) or (isinstance(value, dict) and "kind" in value):
        return value
    params: Any
    if isinstance(value, str):
        name, params = value, {}
    elif isinstance(value, dict) and len(value) == 1:
        ((name, params),) = value.items()
    else:
        raise ValueError(f"a scorer name ({', '.join(SCORERS)}), or one name with its parameters "
                         "({numeric: {tolerance: 0.01}})")
    if name not in SCORERS:
        raise ValueError(f"unknown scorer {name!r}; the scorers are: {', '.join(SCORERS)}")
    if params is None:
        params = {}
    elif not isinstance(params, dict):
        if name not in _SHORT:
            raise ValueError(f"{name}'s parameters are a mapping ({{{name}: {{...}}}})")
        params = {_SHORT[name]: params}
    return {"kind": name, **params}


Scorer = Annotated[
    ExactScorer | IncludesScorer | MatchScorer | RegexScorer | AnswerScorer | NumericScorer
    | ChoiceScorer | JsonFieldScorer | F1Scorer | LlmRubricScorer | PythonScorer,
    Field(discriminator="kind"), BeforeValidator(_spelled)]
"""A scorer as a pydantic field type: a variant's `scorer:` validated into one of the above."""


def verifier_name(scorer: _Spec) -> str:
    """The run's verifier slot: 'llm' when the judge model grades, else the scorer's name."""
    return "llm" if isinstance(scorer, LlmRubricScorer) else scorer.kind


@cache
def load_function(spec: str) -> Callable[..., Any]:
    """The function `module:function` (or `file.py:function`) names; ValueError saying why not."""
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr.isidentifier():
        raise ValueError(f"{spec!r} should read module:function or path/to/file.py:function")
    try:
        if module_name.endswith(".py"):
            path = Path(module_name).expanduser().resolve()
            if not path.is_file():
                raise ValueError(f"no file {path}")
            file_spec = importlib.util.spec_from_file_location(f"seqk_scorer_{path.stem}", path)
            assert file_spec is not None and file_spec.loader is not None
            module = importlib.util.module_from_spec(file_spec)
            file_spec.loader.exec_module(module)
        else:
            module = _import(module_name)
    except ValueError:
        raise
    except Exception as exc:  # noqa: BLE001 - importing runs the user's code
        raise ValueError(f"cannot import {module_name!r}: {type(exc).__name__}: {exc}") from None
    function = getattr(module, attr, None)
    if not callable(function):
        raise ValueError(f"{module_name!r} has no function {attr!r}")
    return function


def _import(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        # The `seqk` script does not put the working directory on sys.path as `python -m` does.
        here = str(Path.cwd())
        if exc.name != name.split(".")[0] or here in sys.path:
            raise
        sys.path.append(here)
        try:
            return importlib.import_module(name)
        finally:
            sys.path.remove(here)


async def _python(spec: str, output: str, reference: Reference) -> Verdict:
    try:
        result = load_function(spec)(output, reference)
        if inspect.isawaitable(result):
            result = await result
    except JudgeError:
        raise
    except Exception as exc:  # noqa: BLE001 - the user's scorer failed: an error, not a wrong answer
        raise JudgeError(f"the python scorer {spec} raised {type(exc).__name__}: {exc}") from exc
    if isinstance(result, Verdict):
        return result
    if isinstance(result, bool):
        return verdict(result, f"{spec} returned {result}", answer=None)
    raise JudgeError(f"the python scorer {spec} returned {type(result).__name__}: return a bool "
                     "or a seqk.benchmark.Verdict")


_BY_NAME: dict[str, Callable[..., Verdict]] = {
    "exact": exact, "includes": includes, "match": match, "regex": regex, "answer": answer,
    "numeric": numeric, "json_field": json_field, "f1": f1}
"""The scorers whose parameters are their verifier's keyword arguments, name for name."""


async def score(scorer: _Spec, output: str, reference: Reference, *, task_prompt: str,
                judge: RoleClient) -> Verdict:
    """Grade `output` against `reference` with `scorer` (the judge is asked only by llm_rubric)."""
    if scorer.kind in _BY_NAME:
        return _BY_NAME[scorer.kind](output, reference.target, **scorer.model_dump(exclude={"kind"}))
    if isinstance(scorer, ChoiceScorer):
        return choice(output, reference.target, choices=reference.choices or [], lone_letter=scorer.lone_letter,
                      multiple=scorer.multiple)
    if isinstance(scorer, LlmRubricScorer):
        if reference.rubric is None:
            raise JudgeError("llm_rubric: this row has no rubric")
        return await llm_rubric(judge, task_prompt, output, reference.rubric)
    if isinstance(scorer, PythonScorer):
        return await _python(scorer.function, output, reference)
    raise TypeError(f"not a scorer: {scorer!r}")
