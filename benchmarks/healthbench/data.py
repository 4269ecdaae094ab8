"""HealthBench records (openai/healthbench, HealthBench Hard by default) as tasks of the
chosen themes."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from benchmarks._common.records import Records
from benchmarks._common.rubric import Criterion, Message, messages_of, render_chat
from benchmarks._common.rubric_data import short_hash
from seqk.benchmark import Task

DEFAULT_THEMES = ("theme:context_seeking", "theme:hedging")
_MIN_SECRET = 8


class Answer(BaseModel):
    """A task's grading data."""

    model_config = ConfigDict(extra="forbid")

    rubrics: list[Criterion]
    """The physician-written rubric items with their signed points."""
    prompt_messages: list[Message]
    """The conversation the grader sees before the answer."""
    secrets: list[str]
    """Reference texts redacted from any feedback."""


def slice_name(themes: list[str]) -> str:
    """`healthbench-default` for the default themes, else `healthbench-` + the first 6 hex
    digits of SHA-1 of the sorted themes joined by ',' (no theme at all: every record)."""
    if sorted(themes) == sorted(DEFAULT_THEMES):
        return "healthbench-default"
    return f"healthbench-{short_hash(themes)}"


def actor_prompt(messages: list[Message]) -> str:
    """The conversation so far, asking for the assistant's next turn (the no-markdown
    instruction is seq_k's addition, not HealthBench's)."""
    return (
        "Continue the conversation below as the assistant. Write plain text: no markdown, and no "
        "commentary about the conversation itself.\n\n"
        "## Conversation\n\n"
        f"{render_chat(messages, 'labelled')}\n\n"
        "Write the assistant's next reply."
    )


def _points(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def criteria(raw: Any) -> list[Criterion]:
    """The rubric items (a single object is one item; other entries are left out)."""
    items = raw if isinstance(raw, list) else [raw]
    return [Criterion(text=str(i.get("criterion") or "").strip(), weight=_points(i.get("points")),
                      tags=tuple(str(t).strip() for t in i.get("tags") or [] if str(t).strip()))
            for i in items if isinstance(i, dict)]


def secrets(record: dict[str, Any]) -> list[str]:
    """Reference texts long enough to be worth redacting from feedback."""
    ideal = record.get("ideal_completions_data")
    found = [ideal.get("ideal_completion") if isinstance(ideal, dict) else None,
             record.get("ideal_completion"), record.get("answer")]
    return [s for s in found if isinstance(s, str) and len(s) >= _MIN_SECRET]


def tasks(records: Records, themes: list[str]) -> list[Task]:
    """The records carrying one of `themes` (all when empty); one that is not an object, or
    has no message or no rubric item, is rejected."""
    wanted = set(themes)
    found: list[Task] = []
    for record, row in records.objects():
        tags = row.get("example_tags") if isinstance(row.get("example_tags"), list) else []
        record_themes = [str(t) for t in tags if str(t).startswith("theme:")]
        if wanted and not wanted.intersection(record_themes):
            continue
        messages = messages_of(row.get("prompt"), default_role="")
        rubric = criteria(row.get("rubrics"))
        if not messages or not rubric:
            records.reject(record, "rubrics" if messages else "prompt",
                           "a non-empty list of {criterion, points, tags} objects" if messages
                           else "a non-empty list of {role, content} messages")
            continue
        source = row.get("prompt_id") or row.get("source_id") or f"{record.position:05d}"
        found.append(Task(
            task_index=record.position, task_id=str(row.get("task_id") or f"healthbench_{source}"),
            prompt=actor_prompt(messages),
            answer=Answer(rubrics=rubric, prompt_messages=messages, secrets=secrets(row)),
            meta={"themes": record_themes, "n_rubrics": len(rubric)}))
    return found
