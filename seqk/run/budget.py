"""Budgets that hold across invocations: what a run has spent is read from the calls table
(every generation of the run), and the run's spend never passes a budget, for the whole run
(`budget_usd`) or for one role (`actor.budget_usd`, ...).

Before an attempt starts, its worst-case cost is reserved: every call of its chain at the
role's max_tokens out and a bound on its input (the prompt's UTF-8 bytes, plus a chat
template's tokens: no tokenizer makes more tokens than bytes). The actor's prompt is known
exactly; each judge and critic prompt comes from the benchmark (`Benchmark.judge_prompts`,
`critic_prompts`, for an empty answer) plus the answer, bounded at ANSWER_BYTES_PER_TOKEN bytes
per max_tokens; a critic's prompt may also quote the judge's report, bounded by the judge's
prompts (a rubric report quotes the rubric). An attempt that does not fit waits for attempts in flight; the
run stops when nothing is in flight and it still does not fit.

Each call checks its own worst case, from its real prompt, against what its attempt still
holds; a call larger than that takes the difference from what the budget has left, and when
nothing is left it is not sent (BudgetRefused: the attempt is kept as an error of its stage,
and the next run goes on from it). When an attempt finishes, what it did not spend is
released. So spend + reservations never exceed a budget: a run never spends more than its
budget, at any concurrency. An agent's own calls (AgentUsage) are outside seqk's model door:
they are counted when their attempt finishes, and not bounded.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from seqk import store
from seqk.benchmark import Task
from seqk.config.spec import RunSpec
from seqk.errors import BudgetRefused
from seqk.models import Completion, Pool, known_price
from seqk.models.limiter import LimitState
from seqk.models.pricing import call_cost
from seqk.models.role import RoleSpec
from seqk.records import CallRecord, Prompt
from seqk.store import queries

RUN = "run"
"""The scope of the whole run's budget; the others are role names."""
CHAT_OVERHEAD_TOKENS = 16
"""Input tokens a provider adds to one user message (role markers, the reply's start)."""
ANSWER_BYTES_PER_TOKEN = 4
"""Bytes per token of an answer not yet written, as it will appear in the judge's and critic's
prompts (English and code run 3-4); a longer answer takes the difference at its call."""

_TICKET: contextvars.ContextVar[Ticket | None] = contextvars.ContextVar("seqk_budget_ticket", default=None)


def tokens_bound(prompt: Prompt) -> int:
    """The most input tokens `prompt` can be: each message's UTF-8 bytes and its chat template."""
    texts = [prompt] if isinstance(prompt, str) else [m.content for m in prompt.messages]
    return sum(len(text.encode("utf-8")) + CHAT_OVERHEAD_TOKENS for text in texts)


def call_worst_usd(role: RoleSpec, input_tokens: float) -> float:
    """One call's most cost: `input_tokens` in, none cached, max_tokens out (0 when unpriced)."""
    if role.model is None:
        return 0.0
    price = known_price(role.model, role.price, role.api_base)
    if price is None:
        return 0.0
    price_in = max(price.input, price.cached_input)
    return call_cost(price, 0, 0, role.max_tokens or 0) + input_tokens * price_in / 1_000_000


@dataclass
class Ticket:
    """One admitted attempt's reservation, per role: what its calls may still spend."""

    held: dict[str, float]
    counted: dict[str, float] = field(default_factory=dict)
    """What its calls through seqk's model door cost, already added to the spend."""


@dataclass(frozen=True)
class BudgetLine:
    """One budget against its spend, as `seqk run` and `seqk plan` show it."""

    scope: str
    """'run' or a role name."""
    budget_usd: float
    """The budget."""
    spent_usd: float
    """What the run has spent in this scope, every generation and invocation."""
    attempt_usd: float
    """The worst case of the attempt last weighed against this budget, in this scope."""

    @property
    def remaining_usd(self) -> float:
        """What is left (negative when overspent)."""
        return self.budget_usd - self.spent_usd


class Gate(Protocol):
    """What the engine asks of a run's budget: BudgetGate, or a Ray worker's view of the run's
    one ledger (seqk.run.ray_budget.RemoteGate)."""

    refused: str | None
    """Set once a budget refused an attempt or a call."""

    @property
    def stopped_by(self) -> str:
        """What a run the gate stopped counts as (RunResult.stopped_by): 'budget' or 'error'."""
        ...

    async def need(self, task: Task, actor_prompt: Prompt | None, answer: str | None,
                   judged: bool, critic: bool) -> dict[str, float]:
        """Per role, the worst case of one attempt (see BudgetGate.need)."""
        ...

    async def admit(self, need: dict[str, float]) -> Ticket | None:
        """Reserve `need` for one attempt; None when it cannot be (then `refused` says why)."""
        ...

    def settle(self, ticket: Ticket, calls: Sequence[CallRecord]) -> None:
        """The attempt finished: release what it holds, count what it spent."""
        ...

    def describe(self) -> str:
        """Why the gate stopped the run, in words."""
        ...


@dataclass
class BudgetGate:
    """Admits an attempt only while spend + reservations + its worst case stay within every
    budget, and lets each of its calls through only within what it holds."""

    spec: RunSpec
    budgets: dict[str, float]
    spent: dict[str, float]
    reserved: dict[str, float] = field(default_factory=dict)
    in_flight: int = 0
    """Admitted attempts not settled yet."""
    refused: str | None = None
    """The scope whose budget refused an attempt or a call, once one has."""
    last_need: dict[str, float] = field(default_factory=dict)
    """The worst case last weighed (an attempt's, or a call's when a call was refused)."""
    refused_call: str | None = None
    """The role of the call that was refused, when a call (not an attempt) was."""
    stopped_by: ClassVar[str] = "budget"
    """What a run this gate stopped counts as (RunResult.stopped_by); a Ray worker's gate whose
    ledger died says "error" (seqk.run.ray_budget.RemoteGate)."""
    _prompt_bytes: dict[int, tuple[list[int], list[int]]] = field(default_factory=dict)
    """task_index -> the byte sizes of its judge prompts and its critic prompts."""
    _settled: asyncio.Event = field(default_factory=asyncio.Event)

    @staticmethod
    def _in(values: dict[str, float], scope: str) -> float:
        return sum(values.values()) if scope == RUN else values.get(scope, 0.0)

    async def need(self, task: Task, actor_prompt: Prompt | None, answer: str | None,
                   judged: bool, critic: bool) -> dict[str, float]:
        """Per role, the worst case of one attempt at `task`: the actor on `actor_prompt` (None:
        no actor call), the judge on the benchmark's prompts when `judged`, the critic when asked.
        `answer`: the output when it is known already (a kept output), else bounded."""
        spec = self.spec
        if task.task_index not in self._prompt_bytes:
            judging = await spec.benchmark.judge_prompts(task, spec.options) if spec.judge.model else []
            critiquing = (await spec.benchmark.critic_prompts(task, spec.options, spec.mode)
                          if spec.critic.model else [])
            self._prompt_bytes[task.task_index] = ([len(p.encode("utf-8")) for p in judging],
                                                   [len(p.encode("utf-8")) for p in critiquing])
        judge_bytes, critic_bytes = self._prompt_bytes[task.task_index]
        answer_bytes = (len(answer.encode("utf-8")) if answer is not None
                        else (spec.actor.max_tokens or 0) * ANSWER_BYTES_PER_TOKEN)
        need: dict[str, float] = {}
        if actor_prompt is not None:
            need["actor"] = call_worst_usd(spec.actor, tokens_bound(actor_prompt))
        if judged and spec.judge.model is not None:
            need["judge"] = sum(call_worst_usd(spec.judge, n + answer_bytes + CHAT_OVERHEAD_TOKENS)
                                for n in judge_bytes)
        if critic and spec.critic.model is not None:
            report_bytes = sum(judge_bytes)
            need["critic"] = sum(call_worst_usd(spec.critic, n + answer_bytes + report_bytes
                                                + CHAT_OVERHEAD_TOKENS) for n in critic_bytes)
        return {role: cost for role, cost in need.items() if cost > 0}

    def _fits(self, need: dict[str, float]) -> str | None:
        """The first scope `need` does not fit in now, or None."""
        for scope, budget in self.budgets.items():
            if self._in(self.spent, scope) + self._in(self.reserved, scope) + self._in(need, scope) > budget:
                return scope
        return None

    def _reserve(self, role: str, cost: float) -> None:
        self.reserved[role] = self.reserved.get(role, 0.0) + cost

    async def admit(self, need: dict[str, float]) -> Ticket | None:
        """Reserve `need`, waiting for attempts in flight while it does not fit (they release what
        they do not spend); None, with `refused` set, when nothing is in flight and it still does
        not fit, or once any budget has refused."""
        while self.refused is None:
            self.last_need = dict(need)
            scope = self._fits(need)
            if scope is None:
                for role, cost in need.items():
                    self._reserve(role, cost)
                self.in_flight += 1
                ticket = Ticket(dict(need))
                _TICKET.set(ticket)  # the attempt's calls run in this task's context
                return ticket
            if not self.in_flight:
                self.refused = scope
                break
            await self._settled.wait()
        return None

    def take(self, ticket: Ticket, role: str, worst: float) -> None:
        """Before a call: move its worst case out of the ticket, adding from the budget what the
        ticket lacks; BudgetRefused (and `refused` set) when the budget cannot add it."""
        held = ticket.held.get(role, 0.0)
        extra = max(worst - held, 0.0)
        if extra > 0:
            scope = self._fits({role: extra})
            if scope is not None:
                self.refused, self.refused_call, self.last_need = scope, role, {role: worst}
                raise BudgetRefused(
                    f"not sent: this {role} call may cost up to ${worst:.4f}, more than its attempt "
                    f"reserved plus what the {'run' if scope == RUN else scope} budget has left")
            self._reserve(role, extra)
        ticket.held[role] = max(held - worst, 0.0)

    def paid(self, ticket: Ticket, role: str, worst: float, cost: float) -> None:
        """After a call (made or failed): its worst case is released and its cost spent."""
        self.reserved[role] = self.reserved.get(role, 0.0) - worst
        self.spent[role] = self.spent.get(role, 0.0) + cost
        ticket.counted[role] = ticket.counted.get(role, 0.0) + cost

    def settle(self, ticket: Ticket, calls: Sequence[CallRecord]) -> None:
        """An admitted attempt finished: release what it holds, and count the calls that did not
        pass through seqk's model door (an agent's own usage)."""
        for role, held in ticket.held.items():
            self.reserved[role] -= held
        ticket.held.clear()
        total: dict[str, float] = {}
        for call in calls:
            total[call.role] = total.get(call.role, 0.0) + (call.cost_usd or 0.0)
        for role, cost in total.items():
            outside = cost - ticket.counted.get(role, 0.0)
            if outside > 1e-12:
                self.spent[role] = self.spent.get(role, 0.0) + outside
        self.in_flight -= 1
        # Wake every attempt waiting for room; each checks again against the new spend.
        self._settled.set()
        self._settled = asyncio.Event()

    def lines(self, need: dict[str, float] | None = None) -> list[BudgetLine]:
        """Every budget with its spend and an attempt's worst case (default: the last weighed)."""
        need = self.last_need if need is None else need
        return [BudgetLine(scope, budget, self._in(self.spent, scope), self._in(need, scope))
                for scope, budget in self.budgets.items()]

    def describe(self) -> str:
        """Why the gate stopped the run, in words."""
        line = next(x for x in self.lines() if x.scope == self.refused)
        what = "the run" if line.scope == RUN else f"the {line.scope}"
        left = max(line.remaining_usd, 0.0)
        if self.refused_call is not None:
            weighed = f"a {self.refused_call} call's worst case is ${line.attempt_usd:.4f}"
        else:
            parts = ", ".join(f"{role} ${cost:.4f}" for role, cost in self.last_need.items())
            weighed = f"the next attempt's reserved worst case is ${line.attempt_usd:.4f} ({parts})"
        return (f"budget reached: {what} has spent ${line.spent_usd:.4f} of its ${line.budget_usd:.4f} "
                f"budget (${left:.4f} left), and {weighed}; raise budget_usd to go on")


class BudgetedPool:
    """The engine's model pool (a seqk.models.Pool), with every call held to its attempt's
    reservation."""

    def __init__(self, pool: Pool, gate: Any):
        self.pool = pool
        self.gate = gate
        """A BudgetGate here; a Ray worker's pool holds a gate to the job's ledger (seqk.run.ray_budget)."""

    async def complete(self, spec: RoleSpec, prompt: Prompt, cache_prefix: str | None = None) -> Completion:
        """Call the model when its worst case fits; count what it cost."""
        ticket = _TICKET.get()
        if not self.holds(ticket):
            return await self.pool.complete(spec, prompt, cache_prefix)
        worst = call_worst_usd(spec, tokens_bound(prompt))
        await self.take(ticket, spec.role, worst)
        cost = 0.0
        try:
            completion = await self.pool.complete(spec, prompt, cache_prefix)
            cost = completion.cost_usd or 0.0
            return completion
        finally:
            await self.paid(ticket, spec.role, worst, cost)

    def holds(self, ticket: Ticket | None) -> bool:
        """Whether the call belongs to an attempt this gate admitted."""
        return ticket is not None

    async def take(self, ticket: Any, role: str, worst: float) -> None:
        """Reserve a call's worst case (BudgetRefused when it does not fit)."""
        self.gate.take(ticket, role, worst)

    async def paid(self, ticket: Any, role: str, worst: float, cost: float) -> None:
        """Swap the call's reservation for what it cost."""
        self.gate.paid(ticket, role, worst, cost)

    def limit_states(self) -> list[LimitState]:
        """The pool's limits."""
        return self.pool.limit_states()

    def sustained(self) -> list[tuple[str, str | None, int, bool, Any]]:
        """What the pool's endpoints sustained (seqk.run.limits)."""
        return self.pool.sustained()

    async def close(self) -> None:
        """Close the pool underneath."""
        await self.pool.close()


def budgets_of(spec: RunSpec) -> dict[str, float]:
    """The run's budgets by scope ('run', or a role name)."""
    budgets = {RUN: spec.budget_usd} if spec.budget_usd is not None else {}
    for role in (spec.actor, spec.judge, spec.critic):
        if role.model is not None and role.budget_usd is not None:
            budgets[role.role] = role.budget_usd
    return budgets


def stored_spend(spec: RunSpec, db: store.DbLike) -> dict[str, float]:
    """What the run has spent so far, per role."""
    database = store.open(db)
    if not database.exists():
        return {}
    with database.connect(read_only=True) as con:
        rows = queries.run_spend_by_role(con, run_id=spec.run_id)
    return {role: float(cost) for role, cost, _ in rows}


def gate_for(spec: RunSpec, db: store.DbLike) -> BudgetGate | None:
    """The run's budget gate, with the spend stored so far; None when the variant sets no budget."""
    budgets = budgets_of(spec)
    if not budgets:
        return None
    return BudgetGate(spec, budgets, stored_spend(spec, db))


async def first_attempt_need(gate: BudgetGate) -> dict[str, float]:
    """What `seqk plan` shows: the worst case of attempt 1 of the task with the longest prompt."""
    spec = gate.spec
    task = max(spec.tasks, key=lambda t: len(t.prompt.encode("utf-8")))
    prompt = spec.protocol.render(task.prompt, 1, spec.k, seq=spec.seq).prompt
    return await gate.need(task, prompt, None, True, spec.seq)
