"""What the engine writes: one attempt with every call it made, and feedback filled in later;
what one call spent (Usage: the token fields and the cost, declared once here; a provider's
Completion, an agent's AgentUsage, a probe's result and a CallRecord are each a Usage);
and what the actor is sent (a Prompt: one user message, or a Chat of several); and what a study
records at each look (seqk.run.study writes it, seqk.analysis.study reads it).

Plain dataclasses, so the tree, the engine and the writer hold them without importing the store.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(kw_only=True)
class RunSettings:
    """What names a run and how it ran, as the runs view gives it: the one declaration of these
    fields, which the report's RunMetrics (seqk.analysis.metrics) and the viewer's RunSummary
    (seqk.view.pages) each are."""

    run_id: str
    benchmark: str
    slice: str
    metric: str
    k: int
    actor_model: str
    feedback_mode: str
    judge_model: str | None
    critic_model: str | None
    verifier: str = ""


@dataclass(kw_only=True)
class Usage:
    """What one LLM call spent, as seqk counts it: the one declaration of the token fields, which
    a provider's Completion, an agent's own AgentUsage and the calls table's CallRecord each are.
    input_tokens counts every input token, cached and cache-written ones included; output_tokens
    counts thinking tokens too (not added again). None: not reported (a failed call)."""

    input_tokens: int | None = 0
    cached_tokens: int | None = 0
    """Input tokens read from the provider's prompt cache (part of input_tokens)."""
    thinking_tokens: int | None = 0
    """Reasoning tokens (part of output_tokens)."""
    output_tokens: int | None = 0
    cache_write_tokens: int | None = 0
    """Input tokens written to the provider's prompt cache (part of input_tokens)."""
    cost_usd: float | None = None
    """US$ at the call's price (seqk.models.pricing); None when no price is known, never 0."""

    @property
    def priced(self) -> bool:
        """Whether the call has a cost (an unpriced call's tokens count, its cost does not)."""
        return self.cost_usd is not None


@dataclass(kw_only=True)
class CallRecord(Usage):
    """One LLM call, as the calls table holds it: who called what, its Usage, how long it took."""

    role: str
    model: str
    prompt: str | None
    output: str | None
    latency_s: float | None
    retries: int
    error: str | None
    started_at: datetime
    price_tier: str = "sync"
    """'sync' | 'batch' (a provider's batch API) | 'flex' (OpenAI's flex tier)."""


@dataclass
class AttemptRecord:
    """One attempt and every call it made: written together or not at all."""

    attempt_uid: str
    run_id: str
    generation: int
    task_index: int
    attempt_index: int
    k: int
    status: str
    success: bool | None
    score: float | None
    prompt: str | None
    output: str | None
    raw_eval_output: str | None
    judge_details: dict[str, Any] | None
    feedback: str | None
    error: dict[str, Any] | None
    started_at: datetime
    finished_at: datetime
    calls: list[CallRecord] = field(default_factory=list)
    chain_index: int = 1
    """1-based; a seq@k run with `chains: n` runs n independent chains per task."""


@dataclass
class FeedbackFill:
    """Feedback written later for a valid failed attempt whose critic had failed, with the
    critic calls made for it (feedback None when the critic failed again)."""

    attempt_uid: str
    run_id: str
    generation: int
    task_index: int
    attempt_index: int
    feedback: str | None
    error: dict[str, Any] | None
    calls: list[CallRecord] = field(default_factory=list)
    chain_index: int = 1


@dataclass(frozen=True)
class Message:
    """One message of a chat prompt."""

    role: str
    """'system' | 'user' | 'assistant'."""
    content: str


@dataclass(frozen=True)
class Chat:
    """An actor prompt of several messages: a system message (a variant's `prompt.system`), or
    the earlier seq@k attempts as assistant turns and their feedback as user turns (`prompt.history:
    messages`). A prompt that is one user message stays a plain str."""

    messages: tuple[Message, ...]
    cache_at: tuple[int, int] | None = None
    """Where the part the next call repeats ends, for the providers' prompt cache: (index of a
    message, characters of its content); None: nothing is repeated."""

    def stored(self) -> str:
        """The prompt as the attempts and calls tables hold it: the JSON array of its messages,
        `[{"role": ..., "content": ...}, ...]`."""
        return json.dumps(self.wire(), ensure_ascii=False)

    def wire(self) -> list[dict[str, str]]:
        """The messages as chat-completion APIs take them."""
        return [{"role": m.role, "content": m.content} for m in self.messages]

    def text(self) -> str:
        """Every message's content, a blank line between two: what a scripted mock model reads."""
        return "\n\n".join(m.content for m in self.messages)


Prompt = str | Chat
"""What the actor is sent: one user message (str), or a Chat."""


def stored_prompt(prompt: Prompt) -> str:
    """The prompt as it is stored: a str as it is, a Chat as the JSON array of its messages."""
    return prompt if isinstance(prompt, str) else prompt.stored()


def stored_chat(text: str | None) -> list[dict[str, str]] | None:
    """The messages of a stored Chat prompt (a JSON array of {role, content}), or None when the
    text is not one. Read only for runs whose config says their prompts are chats."""
    if not text or not text.startswith("["):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if (isinstance(value, list) and value and all(
            isinstance(m, dict) and set(m) == {"role", "content"} and isinstance(m["content"], str)
            for m in value)):
        return value
    return None


def transcript(messages: list[dict[str, str]]) -> str:
    """A chat prompt as text, each message under a `[role]` line (`seqk inspect`, the viewer's
    prompt delta)."""
    return "\n\n".join(f"[{m['role']}]\n{m['content']}" for m in messages)


@dataclass(frozen=True)
class StudyUpdate:
    """The sequence after one look (a row of `study_updates`)."""

    update_index: int
    n_tasks: int
    """Tasks in the sequence."""
    n_used: int
    """Tasks the study has run (a pilot and tasks not entered yet included)."""
    n_ranged: int
    """Entered tasks whose value is a range (an error censored them)."""
    estimate: float | None
    low: float
    high: float
    decision: str
    """seq_better | partner_better | no_practical_difference | undecided."""
    stop_reason: str | None
    """None while the study goes on; decided | tasks_exhausted | budget | error_share | no_cell."""
    spent_usd: float | None
    """Both arms, on the study's tasks (None when nothing was priced)."""
    full_cost_usd: float | None
    """Both arms on every available task, at the mean spend per entered task."""
    budget_usd: float | None
    cells: dict[str, Any] | None
    """{seq: [width, depth], partner: [width, depth], ...}: the cells compared."""

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> StudyUpdate:
        """From a row of sql/studies.sql `study_updates_of`."""
        cells = row["cells"]
        return cls(row["update_index"], row["n_tasks"], row["n_used"], row["n_ranged"], row["estimate"],
                   row["low"], row["high"], row["decision"], row["stop_reason"], row["spent_usd"],
                   row["full_cost_usd"], row["budget_usd"],
                   json.loads(cells) if isinstance(cells, str) else cells)
