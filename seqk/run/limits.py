"""Each endpoint's limit on calls in flight, remembered in the store across runs.

A run's pool adapts each model's limit to the provider's rate limits (seqk.models.limiter),
starting at 4 calls in flight: against a server that takes 120 at once, that slow start costs
five rounds of calls. So each invocation appends, per (api_base, model), what the endpoint
sustained (table endpoint_limits, sql/limits.sql), and the next run against it starts there:

- **sustained**: the most calls in flight at which a call sent since the last rate limit
  succeeded; **bounded** when a 429 bounded it. An invocation that met no 429 proves only a
  lower bound: it is recorded when it beats a remembered bound (or an unbounded value as it has
  aged), and otherwise leaves the remembered row alone, ageing.
- **start**: the remembered value halved for every HALF_LIFE_H of age (a server's load and an
  account's limits change), twice that for an unbounded value (UNBOUNDED_GAIN: a lower bound,
  which slow start would double in its first round anyway), never below 4 and never above the
  role's ceiling (`max_concurrency`, or the run's default). From there the limit slow-starts (one more call per
  success) up to a bounded value and probes past it additively, or slow-starts on past an
  unbounded one; a 429 still lowers it at once.
- **keyed** by the role's `api_base` as `public_url` gives it (scheme, host, port, path: never
  the user, password, query or fragment, where keys may hide), '' for a provider's own endpoint
  (a hosted model without `api_base`); mock and local models are not remembered.
- **reset**: `seqk limits --reset` appends a row with no value, so the next run slow-starts
  from 4 again (the history stays, as everything in the store is appended).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from seqk import store
from seqk.models.endpoints import public_url
from seqk.models.limiter import DEFAULT_START
from seqk.store import queries, transaction

HALF_LIFE_H = 24.0
"""Hours over which a remembered limit's start halves."""

UNBOUNDED_GAIN = 2
"""Where a run starts past a remembered value no 429 bounded, as a multiple of it. Such a value
is only a lower bound (the run asked for no more, or met no refusal there), and a slow start from
S reaches 2S after its first round of replies anyway (each reply frees its slot and adds one), so
starting at 2S sends no larger a burst than slow-starting would, one round earlier: the round a
later, larger run would otherwise spend at S (bench/bench_engine.py's warm-up of 120 x 1 attempt
remembered ~60; the 120 x seq@3 run after it sent 60, then 60 more a round late)."""


@dataclass(frozen=True)
class RememberedLimit:
    """The newest endpoint_limits row of one (api_base, model)."""

    api_base: str
    """As stored: `public_url` of the role's api_base, '' for a provider's own endpoint."""
    model: str
    sustained: int | None
    """Calls in flight the endpoint held; None when forgotten (`seqk limits --reset`)."""
    bounded: bool
    """Whether a rate limit bounded it (the next run probes past it additively)."""
    ceiling: int | None
    rate_limited: int
    calls: int
    run_id: str | None
    age_hours: float

    @property
    def aged(self) -> float | None:
        """The sustained value halved per HALF_LIFE_H of age; None when forgotten."""
        if self.sustained is None:
            return None
        return self.sustained * 0.5 ** (max(0.0, self.age_hours) / HALF_LIFE_H)

    @property
    def start(self) -> int | None:
        """Where the next run's limit starts (before its ceiling): a bounded value as it has aged;
        an unbounded one, a lower bound, at twice that (UNBOUNDED_GAIN); None when forgotten or no
        more than the default start."""
        aged = self.aged
        if aged is None:
            return None
        start = round(aged if self.bounded else UNBOUNDED_GAIN * aged)
        return start if start > DEFAULT_START else None


def endpoint_key(model: str | None, api_base: str | None) -> tuple[str, str] | None:
    """(stored api_base, model) under which a model's limit is remembered, or None (no model, a
    mock or local model, or an api_base that is not an http(s) URL)."""
    if model is None or model.startswith(("mock/", "local/")):
        return None
    if not api_base:
        return "", model
    public = public_url(api_base)
    return None if public is None else (public, model)


def remembered(con: Any) -> dict[tuple[str, str], RememberedLimit]:
    """Every endpoint's newest row, by (api_base, model)."""
    rows = queries.latest_endpoint_limits(con)
    return {(r["api_base"], r["model"]): RememberedLimit(
        r["api_base"], r["model"], r["sustained"], bool(r["bounded"]), r["ceiling"],
        r["rate_limited"], r["calls"], r["run_id"], float(r["age_hours"])) for r in rows}


def starts(roles: Iterable[Any], known: Mapping[tuple[str, str], RememberedLimit]
           ) -> dict[tuple[str, str | None], tuple[int, int | None]]:
    """(model, api_base) of each role (as the pool keys its limits) -> (start, where its slow
    start ends: the bounded value, or None for the ceiling), for the roles with a remembered
    limit above the default start."""
    found: dict[tuple[str, str | None], tuple[int, int | None]] = {}
    for role in roles:
        key = endpoint_key(role.model, role.api_base)
        row = known.get(key) if key is not None else None
        if row is None or row.start is None:
            continue
        found[(role.model, role.api_base)] = (row.start, row.sustained if row.bounded else None)
    return found


def to_record(pool: Any, known: Mapping[tuple[str, str], RememberedLimit],
              run_id: str | None) -> list[dict[str, Any]]:
    """The endpoint_limits rows this invocation's pool has to append (`append_endpoint_limit`'s
    parameters): each remembered model whose limit saw a success since its last decrease, when
    a rate limit bounded it or it beat the remembered start."""
    rows = []
    for model, api_base, held, bounded, limit in pool.sustained():
        key = endpoint_key(model, api_base)
        if key is None:
            continue
        if not bounded and held <= _proven(known.get(key)):
            continue  # no 429 and nothing beyond what is remembered: the old row stands, ageing
        rows.append({"api_base": key[0], "model": model, "sustained": held, "bounded": bounded,
                     "ceiling": limit.ceiling, "rate_limited": limit.rate_limited,
                     "calls": limit.successes, "run_id": run_id})
    return rows


def _proven(before: RememberedLimit | None) -> int:
    """What a later invocation without a 429 must beat to be recorded: a bounded value, or an
    unbounded one's start as it has aged."""
    if before is None or before.sustained is None:
        return 0
    return before.sustained if before.bounded else round(before.aged or 0)


def record(con: Any, rows: Iterable[dict[str, Any]]) -> None:
    """Append `to_record`'s rows, in one transaction."""
    with transaction(con):
        for row in rows:
            queries.append_endpoint_limit(con, **row)


def reset(con: Any, model: str | None = None, api_base: str | None = None) -> list[RememberedLimit]:
    """Forget the remembered limits (those of `model` and/or `api_base` only, when given): the next
    run against them slow-starts from 4. Returns the rows it forgot."""
    wanted_base = None if api_base is None else (public_url(api_base) or api_base)
    forgot = []
    for (base, name), row in remembered(con).items():
        if row.sustained is None or (model is not None and name != model) or (
                wanted_base is not None and base != wanted_base):
            continue
        queries.append_endpoint_limit(con, api_base=base, model=name, sustained=None, bounded=False,
                                      ceiling=None, rate_limited=0, calls=0, run_id=None)
        forgot.append(row)
    return forgot


def list_limits(db: store.DbLike) -> list[RememberedLimit]:
    """Every endpoint's remembered limit, forgotten ones included (`seqk limits`)."""
    with store.connect(db, read_only=True) as con:
        return list(remembered(con).values())


def reset_limits(db: store.DbLike, model: str | None = None,
                 api_base: str | None = None) -> list[RememberedLimit]:
    """Forget the remembered limits (`seqk limits --reset`): see `reset`."""
    with store.connect(db) as con, transaction(con):
        return reset(con, model, api_base)
