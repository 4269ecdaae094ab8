"""CL-bench records (tencent/CL-bench, CL-bench.jsonl) as tasks of one context category."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from benchmarks._common.records import Records
from benchmarks._common.rubric import Message, messages_of, nonempty, render_chat
from benchmarks._common.rubric_data import short_hash
from seqk.benchmark import Task

DEFAULT_CATEGORY = "Domain Knowledge Reasoning"
SHORT_NAMES = {
    "Domain Knowledge Reasoning": "dkr",
    "Rule System Application": "rsa",
    "Procedural Task Execution": "pte",
    "Empirical Discovery & Simulation": "eds",
}


class Answer(BaseModel):
    """A task's grading data."""

    model_config = ConfigDict(extra="forbid")

    rubrics: list[str]
    """The requirements, in the record's order (empty ones left out)."""
    context_category: str
    """The record's metadata.context_category."""
    messages: list[Message]
    """The conversation the answer continues."""


def slice_name(category: str) -> str:
    """`clbench-dkr`, `-rsa`, `-pte`, `-eds` for the four categories; any other value gets a
    hash of its name, so no two categories ever share a slice."""
    return f"clbench-{SHORT_NAMES.get(category) or short_hash([category])}"


def actor_prompt(messages: list[Message]) -> str:
    """The whole conversation, oldest first, then the request for the next assistant turn."""
    return (
        "Here is a conversation, from its oldest message to its newest:\n\n"
        f"{render_chat(messages, 'indexed')}\n\n"
        "Write the next assistant response, continuing this conversation. "
        "Return only that response."
    )


def rubric_texts(raw: Any) -> list[str]:
    """The rubric as strings (objects give their `rubric_criteria`), empty ones left out."""
    items = raw if isinstance(raw, list) else [raw]
    return nonempty([i.get("rubric_criteria") if isinstance(i, dict) else i for i in items])


def tasks(records: Records, category: str) -> list[Task]:
    """The records of `category` in file order; one that is not an object, or has no usable
    message, is rejected."""
    found: list[Task] = []
    for record, row in records.objects():
        meta = row.get("metadata") if isinstance(row.get("metadata"), dict) else {}
        if str(meta.get("context_category") or "").strip() != category:
            continue
        messages = messages_of(row.get("messages"))
        if not messages:
            records.reject(record, "messages", "a non-empty list of {role, content} messages")
            continue
        task_id = meta.get("task_id") or row.get("task_id") or row.get("idx") or f"clbench_{record.position:05d}"
        rubrics = rubric_texts(row.get("rubrics"))
        found.append(Task(
            task_index=record.position, task_id=str(task_id), prompt=actor_prompt(messages),
            answer=Answer(rubrics=rubrics, context_category=category, messages=messages),
            meta={"context_category": category, "sub_category": meta.get("sub_category"),
                  "context_id": meta.get("context_id"), "n_rubrics": len(rubrics)}))
    return found
