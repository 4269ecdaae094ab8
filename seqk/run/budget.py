"""Budgets that hold across invocations: what a run has spent is read from the calls table
(every generation of the run), and no attempt starts that could carry the spend past a
budget, for the whole run (`budget_usd`) or for one role (`actor.budget_usd`, ...).

The cost of the next attempt is estimated as the run's mean cost per attempt so far, role by
role; before any attempt, from the prompts' size and max_tokens (or GUESS_OUTPUT_TOKENS when
max_tokens is unset) at the role's price. Attempts in flight hold their estimate until they
finish; an attempt that does not fit waits for them, and the run stops only when nothing is in
flight and one more attempt does not fit. So it stops within one attempt's cost of the limit,
and the next invocation, reading the same spend and the same mean, starts nothing.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from seqk import store
from seqk.config.spec import RunSpec
from seqk.models import known_price
from seqk.models.pricing import call_cost
from seqk.models.role import RoleSpec
from seqk.records import CallRecord

RUN = "run"
"""The scope of the whole run's budget; the others are role names."""
GUESS_OUTPUT_TOKENS = 4096
"""Output tokens assumed per call before any attempt, for a role without max_tokens."""
_CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class BudgetLine:
    """One budget against its spend, as `seqk run` and `seqk plan` show it."""

    scope: str
    """'run' or a role name."""
    budget_usd: float
    spent_usd: float
    next_attempt_usd: float
    """The estimated cost of one more attempt within this scope."""

    @property
    def remaining_usd(self) -> float:
        """What is left (negative when overspent)."""
        return self.budget_usd - self.spent_usd


@dataclass
class BudgetGate:
    """Admits an attempt only while spend + attempts in flight + one more stay within every budget."""

    budgets: dict[str, float]
    spent: dict[str, float]
    n_attempts: int
    prior: dict[str, float]
    reserved: dict[str, float] = field(default_factory=dict)
    in_flight: int = 0
    """Admitted attempts not settled yet."""
    refused: str | None = None
    """The scope whose budget refused an attempt, once one has."""
    _settled: asyncio.Event = field(default_factory=asyncio.Event)

    def estimate(self) -> dict[str, float]:
        """Per role, the expected cost of one more attempt."""
        if self.n_attempts:
            return {role: cost / self.n_attempts for role, cost in self.spent.items()}
        return dict(self.prior)

    @staticmethod
    def _in(values: dict[str, float], scope: str) -> float:
        return sum(values.values()) if scope == RUN else values.get(scope, 0.0)

    def try_admit(self) -> tuple[dict[str, float] | None, str | None]:
        """Reserve one attempt's estimated cost, or say which budget cannot take it now."""
        estimate = self.estimate()
        for scope, budget in self.budgets.items():
            if self._in(self.spent, scope) + self._in(self.reserved, scope) + self._in(estimate, scope) > budget:
                return None, scope
        for role, cost in estimate.items():
            self.reserved[role] = self.reserved.get(role, 0.0) + cost
        self.in_flight += 1
        return estimate, None

    async def admit(self) -> dict[str, float] | None:
        """The reservation of one more attempt, waiting for attempts in flight while it does not
        fit (they may cost less than reserved); None, with `refused` set, when nothing is in
        flight and it still does not fit."""
        while self.refused is None:
            reservation, scope = self.try_admit()
            if reservation is not None:
                return reservation
            if not self.in_flight:
                self.refused = scope
                break
            await self._settled.wait()
        return None

    def settle(self, reservation: dict[str, float], calls: Sequence[CallRecord], attempt: bool = True) -> None:
        """An admitted attempt finished: release its reservation and count what its calls cost."""
        for role, cost in reservation.items():
            self.reserved[role] -= cost
        for call in calls:
            self.spent[call.role] = self.spent.get(call.role, 0.0) + (call.cost_usd or 0.0)
        self.n_attempts += attempt and bool(calls)
        self.in_flight -= 1
        # Wake every attempt waiting for room; each checks again against the new spend.
        self._settled.set()
        self._settled = asyncio.Event()

    def lines(self) -> list[BudgetLine]:
        """Every budget with its spend and the next attempt's estimate."""
        estimate = self.estimate()
        return [BudgetLine(scope, budget, self._in(self.spent, scope), self._in(estimate, scope))
                for scope, budget in self.budgets.items()]

    def describe(self) -> str:
        """Why the gate stopped the run, in words."""
        line = next(x for x in self.lines() if x.scope == self.refused)
        what = "the run" if line.scope == RUN else f"the {line.scope}"
        return (f"budget reached: {what} has spent ${line.spent_usd:.4f} of its ${line.budget_usd:.4f} "
                f"budget, and the next attempt would cost about ${line.next_attempt_usd:.4f}; "
                f"raise budget_usd to go on")


def budgets_of(spec: RunSpec) -> dict[str, float]:
    """The run's budgets by scope ('run', or a role name)."""
    budgets = {RUN: spec.budget_usd} if spec.budget_usd is not None else {}
    for role in (spec.actor, spec.judge, spec.critic):
        if role.model is not None and role.budget_usd is not None:
            budgets[role.role] = role.budget_usd
    return budgets


def prior_estimate(spec: RunSpec) -> dict[str, float]:
    """One attempt's cost before any was made: the mean task prompt in, max_tokens out; the judge
    and critic read the prompt and the answer. Roles without a known price are left out."""
    prompt = sum(len(t.prompt) for t in spec.tasks) / max(len(spec.tasks), 1) / _CHARS_PER_TOKEN
    answer = spec.actor.max_tokens or GUESS_OUTPUT_TOKENS
    roles: list[tuple[RoleSpec, float]] = [(spec.actor, prompt)]
    if spec.rejudge_of is not None:
        roles = []
    roles.append((spec.judge, prompt + answer))
    if spec.seq:
        roles.append((spec.critic, prompt + answer))
    estimate = {}
    for role, tokens_in in roles:
        if role.model is None:
            continue
        price = known_price(role.model, role.price, role.api_base)
        if price is not None:
            estimate[role.role] = call_cost(price, tokens_in, 0, role.max_tokens or GUESS_OUTPUT_TOKENS)
    return estimate


def stored_spend(spec: RunSpec, db: str | os.PathLike[str] | None) -> tuple[dict[str, float], int]:
    """What the run has spent so far, per role, and how many attempts made calls."""
    path = store.resolve(db)
    if not store.exists(path):
        return {}, 0
    with store.connect(path, read_only=True) as con:
        rows = store.select_rows(con, "run_spend_by_role", run_id=spec.run_id)
    return {role: float(cost) for role, cost, _ in rows}, (rows[0][2] if rows else 0)


def gate_for(spec: RunSpec, db: str | Path | None) -> BudgetGate | None:
    """The run's budget gate, with the spend stored so far; None when the variant sets no budget."""
    budgets = budgets_of(spec)
    if not budgets:
        return None
    spent, n_attempts = stored_spend(spec, db if db is not None else spec.db)
    return BudgetGate(budgets, spent, n_attempts, prior_estimate(spec))
