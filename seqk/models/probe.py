"""Probe: one tiny call per model, to check keys and endpoints before spending."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from seqk.errors import ProviderError
from seqk.models.openai_http import close_sessions
from seqk.models.pool import ModelPool
from seqk.models.registry import missing_credentials
from seqk.models.retry import RetryPolicy
from seqk.models.role import RoleSpec
from seqk.records import Usage

PROBE_PROMPT = "Reply with the single word: ok"


@dataclass(kw_only=True)
class ProbeResult(Usage):
    """One model's answer to the probe and its Usage (or why it gave none)."""

    model: str
    roles: list[str]
    api_base: str | None
    ok: bool
    latency_s: float | None = None
    text: str | None = None
    error: str | None = None


def probe(roles: Sequence[RoleSpec], max_tokens: int = 8) -> list[ProbeResult]:
    """Call each distinct (model, endpoint) of `roles` once, without retries."""
    distinct: dict[tuple[str, str | None, str | None], tuple[RoleSpec, list[str]]] = {}
    for role in roles:
        if role.model is None:
            continue
        key = (role.model, role.api_base, role.api_key_env)
        distinct.setdefault(key, (role, []))[1].append(role.role)

    async def one(spec: RoleSpec, names: list[str]) -> ProbeResult:
        assert spec.model is not None
        result = ProbeResult(model=spec.model, roles=names, api_base=spec.api_base, ok=False)
        result.error = missing_credentials(spec)
        if result.error:
            return result
        pool = ModelPool(RetryPolicy(max_retries=0))
        call = dataclasses.replace(spec, temperature=0, max_tokens=max_tokens)
        try:
            c = await pool.complete(call, PROBE_PROMPT)
        except ProviderError as exc:
            result.error = f"{exc.kind}: {' '.join(str(exc).split())}"[:500]
            return result
        result.ok = True
        result.latency_s, result.text, result.cost_usd = c.latency_s, c.text, c.cost_usd
        result.input_tokens, result.output_tokens = c.input_tokens, c.output_tokens
        return result

    async def everything() -> list[ProbeResult]:
        try:
            return await asyncio.gather(*(one(spec, names) for spec, names in distinct.values()))
        finally:
            await close_sessions()

    return asyncio.run(everything())
