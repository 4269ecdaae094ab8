"""ResearchRubrics records (ScaleAI/researchrubrics, processed_data.jsonl) as tasks."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from benchmarks._common.records import Records
from benchmarks._common.rubric import Criterion
from benchmarks._common.rubric_data import short_hash
from seqk.benchmark import Task

DEFAULT_AXIS = "Explicit Criteria"


class Answer(BaseModel):
    """A task's grading data."""

    model_config = ConfigDict(extra="forbid")

    rubrics: list[Criterion]
    """The criteria with their signed weights and axes."""
    domain: Any = None
    """The record's `domain`, as the data gives it."""


def slice_name(domains: list[str] | None) -> str:
    """`researchrubrics` for every domain, else `researchrubrics-` + the first 6 hex digits
    of SHA-1 of the sorted domains joined by ','."""
    return f"researchrubrics-{short_hash(domains)}" if domains else "researchrubrics"


def actor_prompt(prompt: str) -> str:
    """The research request after the research-assistant instruction."""
    return (
        "You are a research assistant. Write a thorough, well-structured response in markdown that "
        "is comprehensive and accurate and covers every aspect of the request below.\n\n" + prompt
    )


def criteria(raw: Any) -> list[Criterion] | None:
    """The rubric (weight 1.0 and axis 'Explicit Criteria' when absent); None when an item is
    not an object with a criterion and a numeric weight."""
    found = []
    for item in raw if isinstance(raw, list) else [raw]:
        if not isinstance(item, dict) or not str(item.get("criterion") or "").strip():
            return None
        weight = item.get("weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, int | float):
            return None
        found.append(Criterion(str(item["criterion"]).strip(), float(weight),
                               axis=str(item.get("axis") or DEFAULT_AXIS)))
    return found


def tasks(records: Records, domains: list[str] | None) -> list[Task]:
    """The records of `domains` (all when none) in file order; one that is not an object, or
    has no prompt or no well-formed rubric, is rejected."""
    found: list[Task] = []
    for record, row in records.objects():
        domain = row.get("domain")
        if domains and domain not in domains:
            continue
        prompt = row.get("prompt")
        rubric = criteria(row.get("rubrics"))
        if not isinstance(prompt, str) or not prompt.strip():
            records.reject(record, "prompt", "a non-empty string")
            continue
        if not rubric:
            records.reject(record, "rubrics", "a non-empty list of {criterion, weight (a number)} objects")
            continue
        found.append(Task(
            task_index=record.position, task_id=str(row.get("sample_id") or f"rr_{record.position:05d}"),
            prompt=actor_prompt(prompt), answer=Answer(rubrics=rubric, domain=domain),
            meta={"domain": domain, "n_rubrics": len(rubric)}))
    return found
