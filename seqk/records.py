"""What the engine writes: one attempt with every call it made, and feedback filled in later;
and what a study records at each look (seqk.run.study writes it, seqk.analysis.study reads it).

Plain dataclasses, so the tree, the engine and the writer hold them without importing the store.
"""

from __future__ import annotations

import json
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
