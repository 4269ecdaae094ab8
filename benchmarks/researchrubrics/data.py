"""ResearchRubrics records (ScaleAI/researchrubrics, processed_data.jsonl) as tasks."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from benchmarks._common.rubric import Criterion
from benchmarks._common.rubric_data import DataFile, json_lines, short_hash
from seqk.benchmark import Task

DEFAULT_AXIS = "Explicit Criteria"


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


def tasks(data: DataFile, domains: list[str] | None) -> tuple[list[Task], list[int]]:
    """The records of `domains` (all when none) in file order, and the lines skipped."""
    found: list[Task] = []
    skipped: list[int] = []
    for line_no, record in json_lines(data):
        if not isinstance(record, dict):
            skipped.append(line_no)
            continue
        domain = record.get("domain")
        if domains and domain not in domains:
            continue
        prompt = record.get("prompt")
        rubric = criteria(record.get("rubrics"))
        if not isinstance(prompt, str) or not prompt.strip() or not rubric:
            skipped.append(line_no)
            continue
        found.append(Task(
            task_index=len(found) + 1, task_id=str(record.get("sample_id") or f"rr_{line_no:05d}"),
            prompt=actor_prompt(prompt), answer={"rubrics": [asdict(c) for c in rubric], "domain": domain},
            meta={"domain": domain, "n_rubrics": len(rubric)}))
    return found, skipped
