"""The actor's prompt: the bare task for pass@k; for seq@k, the task, the
"This is attempt t of K." note, and every earlier attempt with its feedback.

The wording is the seed's, word for word; changing it changes results, so it
is versioned (PROMPT_VERSION is part of every run's fingerprint).
"""

from __future__ import annotations

from collections.abc import Sequence

from seqk.benchmark.contract import HistoryItem

PROMPT_VERSION = "seq_k-v1"

FIRST_NOTE = (
    "If this attempt does not pass, you will receive feedback and can revise it "
    "on the remaining attempts."
)
RETRY_NOTE = "Review your previous attempt(s) and the feedback below, then provide an improved answer."


def retry_note(attempt_index: int, k: int, *, has_history: bool) -> str:
    """The sentence between the task and the previous attempts."""
    return f"This is attempt {attempt_index} of {k}. {RETRY_NOTE if has_history else FIRST_NOTE}"


def actor_prompt(task_prompt: str, attempt_index: int, k: int, *, seq: bool,
                 history: Sequence[HistoryItem] = ()) -> str:
    """The exact text the actor sees on attempt `attempt_index` (1-based) of `k`."""
    if not seq:
        return task_prompt
    parts = [task_prompt, retry_note(attempt_index, k, has_history=bool(history))]
    for i, item in enumerate(history, start=1):
        parts.append(f"<PreviousAttempt {i}>\n{item.output}\n</PreviousAttempt {i}>")
        if item.feedback:
            parts.append(f"<Feedback {i}>\n{item.feedback}\n</Feedback {i}>")
    return "\n\n".join(parts)


def stable_prefix(prompt: str) -> str:
    """The start of an actor prompt that the next call repeats, for the providers' prompt cache:
    a seq@k prompt changes at its "This is attempt t of K." note, so only the task before it
    is shared with the next attempt; a pass@k prompt is repeated whole by its k samples."""
    head, note, _ = prompt.partition("\n\nThis is attempt ")
    return head if note else prompt
