"""What the engine writes: one attempt with every call it made, and feedback filled in later.

Plain dataclasses, so the tree, the engine and the writer hold them without importing the store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass
class CallRecord:
    """One LLM call, as the calls table holds it."""

    role: str
    model: str
    prompt: str | None
    output: str | None
    input_tokens: int | None
    cached_tokens: int | None
    thinking_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    latency_s: float | None
    retries: int
    error: str | None
    started_at: datetime
    cache_write_tokens: int | None = None
    """Input tokens written to the provider's prompt cache (part of input_tokens)."""
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
