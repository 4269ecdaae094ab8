"""AdvancedIF records (facebook/AdvancedIF's if_oss_full_data.csv, or a 1:1 JSONL
conversion of it) as tasks. Cells may hold JSON text (the CSV) or decoded values (JSONL)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from benchmarks._common.records import Records
from benchmarks._common.rubric import Message, messages_of, nonempty, render_chat
from benchmarks._common.rubric_data import decoded
from seqk.benchmark import Task

ALIASES = {
    "system_steerability_v2": "if_system_steerability_oss",
    "carried_context_multi_turn_eval_v5": "if_carried_context_oss",
    "complex_if_single_turn_v5": "if_complex_if_oss",
}
_ROLES = ("system", "user", "assistant")


class Answer(BaseModel):
    """A task's grading data."""

    model_config = ConfigDict(extra="forbid")

    rubrics: list[str]
    """The numbered requirements the judge rules on."""
    conversation: str
    """The conversation as the judge reads it (a transcript)."""
    benchmark_name: str
    """Which AdvancedIF subset the record comes from."""
    messages: list[Message]
    """The conversation's turns."""


def conversation(raw: Any) -> list[Message] | None:
    """The turns with text, roles outside system/user/assistant read as user; None when an
    entry is not an object."""
    raw = decoded(raw)
    if not isinstance(raw, list) or not all(isinstance(m, dict) for m in raw):
        return None
    turns = [Message(m.role if m.role in _ROLES else "user", m.content.strip())
             for m in messages_of(raw, other="json")]
    return [m for m in turns if m.content]


def rubrics(record: dict[str, Any]) -> list[str]:
    """`prompt_metadata.rubrics`, else the top-level `rubrics`: a list, a JSON list as text,
    or one plain string."""
    meta = decoded(record.get("prompt_metadata"))
    raw = meta.get("rubrics") if isinstance(meta, dict) and "rubrics" in meta else record.get("rubrics")
    raw = decoded(raw)
    return nonempty(raw if isinstance(raw, list) else [raw])


def actor_prompt(messages: list[Message], benchmark_name: str) -> str:
    """One user message alone is the prompt itself; anything else is a transcript after a
    preamble that, for system-steerability tasks, says to follow the system instructions."""
    if len(messages) == 1 and messages[0].role == "user":
        return messages[0].content
    steer = "Follow its system instructions and continue" if "system_steer" in benchmark_name.lower() \
        else "Continue"
    preamble = (f"You are the assistant in the conversation below. {steer} the conversation: "
                "write only the next assistant response.")
    return f"{preamble}\n\n{render_chat(messages, 'transcript')}"


def tasks(records: Records) -> list[Task]:
    """Every record in file order; one without a usable conversation, without rubrics, or
    multi-turn without a benchmark_name, is rejected."""
    found: list[Task] = []
    for record, row in records.objects():
        messages = conversation(row.get("conversation_history"))
        texts = rubrics(row) if messages else []
        name = str(row.get("benchmark_name") or "").strip()
        if not messages:
            records.reject(record, "conversation_history",
                           "a non-empty list of {role, content} objects (or its JSON text)")
            continue
        if not texts:
            records.reject(record, "rubrics", "a non-empty list of requirements (or its JSON text)")
            continue
        if not name and len(messages) > 1:
            records.reject(record, "benchmark_name", "a name for a multi-turn conversation")
            continue
        name = ALIASES.get(name, name)
        source_row = row.get("source_row")
        # The public CSV's own row number (after its header) when the record does not say.
        source_row = int(source_row) if str(source_row or "").strip().isdigit() else record.position + 1
        transcript = render_chat(messages, "transcript")
        found.append(Task(
            task_index=record.position,
            task_id=str(row.get("task_id") or f"advancedif_{source_row:05d}"),
            prompt=actor_prompt(messages, name),
            answer=Answer(rubrics=texts, conversation=transcript, benchmark_name=name, messages=messages),
            meta={"benchmark_name": name, "source_row": source_row, "n_rubrics": len(texts)}))
    return found
