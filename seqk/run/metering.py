"""What an attempt pays for: every call a role makes, metered into the attempt's call
list as the calls table holds it (the four token fields, cost, latency, retries, error),
and the attempt's seeds and error records.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any

from seqk import seeds
from seqk.benchmark import AgentUsage
from seqk.errors import ProviderError
from seqk.models import Pool, cost_usd, pricing
from seqk.models.role import RoleSpec
from seqk.records import CallRecord, Prompt, stored_prompt


def now() -> datetime:
    """UTC now, naive, as the database stores timestamps."""
    return datetime.now(UTC).replace(tzinfo=None)



def error_record(stage: str, exc: BaseException) -> dict[str, Any]:
    """An attempt's error column: the stage it failed at, the kind, the message, the status."""
    return {"stage": stage, "type": getattr(exc, "kind", type(exc).__name__),
            "message": str(exc)[:4000], "status_code": getattr(exc, "status_code", None)}


def seeded(role: RoleSpec, task_index: int, attempt_index: int, seq: bool, chain_index: int = 1) -> RoleSpec:
    """The role with its seed for this task, chain and attempt (seqk.seeds): one seed for every
    attempt would make the k "independent" pass@k samples one sample repeated k times, one for
    every task would share a sample's luck across tasks, and one for every chain would make a
    task's chains one chain repeated."""
    if role.seed is None:
        return role
    chain, index = (chain_index, attempt_index) if seq else seeds.slot(seq, attempt_index)
    return dataclasses.replace(role, seed=seeds.seed_for(role.seed, task_index, chain, index, role.role))


def agent_call(usage: AgentUsage, prompt: str, output: str, started: datetime,
                price: pricing.Price | None = None) -> CallRecord:
    """An agent harness's own token usage as the actor's call, priced like any other."""
    cost = cost_usd(usage.model, usage.input_tokens, usage.cached_tokens, usage.output_tokens,
                            own=price)
    return CallRecord("actor", usage.model, prompt, output, usage.input_tokens, usage.cached_tokens,
                      usage.thinking_tokens, usage.output_tokens, cost, usage.latency_s, 0, None, started)


class MeteredClient:
    """A RoleClient that meters every call into the attempt's call list."""

    def __init__(self, pool: Pool, spec: RoleSpec, calls: list[CallRecord]):
        self.pool = pool
        self.spec = spec
        self.role = spec.role
        self.model = spec.model
        self.calls = calls

    async def complete(self, prompt: Prompt, cache_prefix: str | None = None) -> str:
        """Call the role's model; record the call whether it succeeds or fails. `cache_prefix`:
        the start of a str prompt the next call repeats (only the actor's prompts repeat, and the
        engine says where; marking a one-off judge or critic prompt would pay a cache write for
        nothing)."""
        if self.spec.model is None:
            raise RuntimeError(f"the {self.role} has no model in this run")
        started = now()
        stored = stored_prompt(prompt)
        try:
            c = await self.pool.complete(self.spec, prompt, cache_prefix=cache_prefix)
        except ProviderError as exc:
            self.calls.append(CallRecord(
                self.role, self.spec.model, stored, None, None, None, None, None, None, None,
                getattr(exc, "retries", 0), str(exc), started, price_tier=self.spec.price_tier))
            raise
        self.calls.append(CallRecord(
            self.role, c.model, stored, c.text, c.input_tokens, c.cached_tokens,
            c.thinking_tokens, c.output_tokens, c.cost_usd, c.latency_s, c.retries, None, started,
            c.cache_write_tokens, c.price_tier))
        return c.text
