"""An LLM judge as a verifier: reading a judge's JSON reply, one call per criterion made at once,
and `llm_rubric`, which grades a reply against a rubric (one text, or a list of criteria).

A judge reply that cannot be read raises seqk.errors.JudgeError: the engine records the
attempt as an error of stage `judge`, keeps the actor's output, and asks the judge again on
it next run. An unreadable reply is never scored as a wrong answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from seqk.benchmark import RoleClient, Verdict
from seqk.errors import JudgeError, ProviderError
from seqk.verifiers.base import verdict
from seqk.verifiers.jsonextract import extract_all_json

T = TypeVar("T")

_FENCE = "```"


def excerpt(reply: str, limit: int = 300) -> str:
    """The start of a reply, quoted, for an error message."""
    text = reply.strip()
    return repr(text if len(text) <= limit else text[:limit] + "...")


def judge_json(reply: str, accept: Callable[[dict[str, Any]], bool], what: str) -> dict[str, Any]:
    """The judge's JSON object: the last fenced block that holds an accepted object (an
    unterminated final fence counts), else the last accepted object anywhere in the reply,
    found by a scan that ignores braces inside JSON strings, so prose with LaTeX braces
    around the JSON does not break it. `what` names the expected shape in the error.

    Raises JudgeError when no accepted object is found.
    """
    def accepted(values: list[Any]) -> dict[str, Any] | None:
        return next((v for v in reversed(values) if isinstance(v, dict) and accept(v)), None)

    segments = reply.split(_FENCE)
    for fenced in reversed(segments[1::2]):
        body = fenced.removeprefix("json").removeprefix("JSON").strip()
        if body[:1] in ("{", "[") and (found := accepted(extract_all_json(body))) is not None:
            return found
    found = accepted(extract_all_json(reply))
    if found is None:
        raise JudgeError(f"no {what} in the judge's reply: {excerpt(reply)}")
    return found


async def judge_each(judge: RoleClient, prompts: Sequence[str], read: Callable[[str], T]) -> list[T]:
    """One judge call per prompt, all in flight at once (the judge role's max_concurrency
    bounds them in the model pool), each reply turned into a result by `read`; results in
    prompt order.

    Every call finishes before anything is raised, so each one is recorded with the
    attempt; then the first failure in prompt order is raised (JudgeError naming the item,
    or the provider's error as it came).
    """
    async def one(prompt: str) -> T:
        return read(await judge.complete(prompt))

    results = await asyncio.gather(*(one(p) for p in prompts), return_exceptions=True)
    for index, result in enumerate(results, start=1):
        if isinstance(result, ProviderError):
            raise result
        if isinstance(result, JudgeError):
            raise JudgeError(f"rubric item {index} of {len(prompts)}: {result}") from result
        if isinstance(result, BaseException):
            raise result
    return list(results)  # type: ignore[arg-type]


RUBRIC_PROMPT = """Decide whether a response meets one criterion.

## Task
{task}

## Response
{output}

## Criterion
{criterion}

Return only a JSON object: {{"met": true or false, "reason": "one sentence"}}"""
"""The judge's prompt for one criterion of `llm_rubric`."""


def _met(reply: str) -> tuple[bool, str]:
    obj = judge_json(reply, lambda o: isinstance(o.get("met"), bool), 'JSON object with a boolean "met"')
    return obj["met"], str(obj.get("reason") or "").strip()


async def llm_rubric(judge: RoleClient, task: str, output: str, rubric: str | Sequence[str]) -> Verdict:
    """The judge rules on each criterion of `rubric` (one text is one criterion), one call each,
    all in flight at once (RUBRIC_PROMPT); success when every criterion is met, score the share
    met. An unreadable reply raises JudgeError (an error of the attempt, never a wrong answer)."""
    criteria = [rubric] if isinstance(rubric, str) else list(rubric)
    criteria = [c.strip() for c in criteria if c and c.strip()]
    if not criteria:
        raise JudgeError("llm_rubric needs at least one criterion")
    rulings = await judge_each(judge, [RUBRIC_PROMPT.format(task=task, output=output, criterion=c)
                                       for c in criteria], _met)
    unmet = [c for c, (met, _) in zip(criteria, rulings, strict=True) if not met]
    listed = "\n".join(f"{i}. {c}" for i, c in enumerate(unmet, start=1))
    return verdict(not unmet, "" if not unmet else "Unmet criteria:\n" + listed,
                   score=(len(criteria) - len(unmet)) / len(criteria), answer=None,
                   criteria=[{"criterion": c, "met": met, "reason": reason}
                             for c, (met, reason) in zip(criteria, rulings, strict=True)])
