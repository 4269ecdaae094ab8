"""A run's budget on Ray: one ledger that every worker reserves against.

The budget's rule is the local executor's (seqk/run/budget.py): an attempt starts only when its
worst case fits beside the spend and every reservation; each call checks its own worst case
against what its attempt holds; what an attempt did not spend is released when it ends. On Ray
the attempts of one run are spread over workers (processes, machines), so the BudgetGate itself
lives in one Ray actor, the `BudgetLedger`, and each worker's engine talks to it through a
`RemoteGate` (admit, take, paid, settle: one actor call each, 1-2 ms beside an LLM call). With
one ledger, spend + reservations never exceed a budget across workers, exactly as across the
attempts of one process.

A worker that dies leaves its tickets open; the driver `abandon`s them: what they held is
released, and the worst case of a call that was in flight counts as spent (the provider may have
billed it; the next `seqk run` reads the real spend from the database).

The ledger runs on the driver's node, so it shares the driver's fate. Should it die anyway
(killed, out of memory), no worker can know what the others spend: every worker stops admitting
attempts and refuses every further call, the run stops saying so, and the next `seqk run` goes
on from the spend in the database. Restarting the ledger instead would forget the reservations
of the attempts in flight, and could spend past the budget.
"""

from __future__ import annotations

import contextlib
import contextvars
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from seqk.benchmark import Task
from seqk.errors import BudgetRefused
from seqk.records import CallRecord, Prompt
from seqk.run.budget import _TICKET, BudgetedPool, BudgetGate, Ticket


class LedgerLost(BudgetRefused):
    """The ledger died: a call cannot be held to the budget, so it does not go."""


@dataclass
class LedgerTicket(Ticket):
    """A worker's ticket: what it holds is kept by the ledger, under this id."""

    tid: str = ""
    job: str = ""


JOB: contextvars.ContextVar[str] = contextvars.ContextVar("seqk_ray_job", default="")
"""The stream (one driver request to one worker) an attempt runs in: the driver abandons a dead
worker's tickets by it."""


class BudgetLedger:
    """The Ray actor holding the run's BudgetGate; tickets are named by id across processes."""

    def __init__(self, spec: Any, budgets: dict[str, float], spent: dict[str, float]):
        self.gate = BudgetGate(spec, budgets, dict(spent))
        self.tickets: dict[str, Ticket] = {}
        self.calls: dict[str, list[tuple[str, float]]] = {}
        """ticket id -> the (role, worst case) of its calls taken and not paid yet."""
        self.jobs: dict[str, set[str]] = {}
        """job (one stream of one worker) -> its open ticket ids."""

    async def admit(self, job: str, need: dict[str, float]) -> tuple[str | None, str | None]:
        """(ticket id, None), or (None, why the budget stopped the run)."""
        ticket = await self.gate.admit(need)
        if ticket is None:
            return None, self.gate.describe()
        tid = uuid.uuid4().hex
        self.tickets[tid], self.calls[tid] = ticket, []
        self.jobs.setdefault(job, set()).add(tid)
        return tid, None

    def take(self, tid: str, role: str, worst: float) -> tuple[str, str] | None:
        """None when the call may go; else (BudgetRefused's message, why the run stopped)."""
        try:
            self.gate.take(self.tickets[tid], role, worst)
        except BudgetRefused as exc:
            return str(exc), self.gate.describe()
        self.calls[tid].append((role, worst))
        return None

    def paid(self, tid: str, role: str, worst: float, cost: float) -> None:
        self.calls[tid].remove((role, worst))
        self.gate.paid(self.tickets[tid], role, worst, cost)

    def settle(self, job: str, tid: str, calls: Sequence[CallRecord]) -> None:
        self.gate.settle(self.tickets.pop(tid), calls)
        del self.calls[tid]
        self.jobs.get(job, set()).discard(tid)

    def abandon(self, job: str) -> None:
        """The worker running `job` died: close its tickets (see the module's docstring)."""
        for tid in sorted(self.jobs.pop(job, set())):
            for role, worst in self.calls.pop(tid):
                self.gate.paid(self.tickets[tid], role, worst, worst)
            self.gate.settle(self.tickets.pop(tid), [])

LEDGER_LOST = ("the run's budget ledger (a Ray actor) died, so no worker can know what the others "
               "spend: the run stopped; `seqk run` again goes on from the spend in the database")


class RemoteGate:
    """A worker's view of the ledger, with the BudgetGate methods the engine calls.

    `need` is computed here (it reads the benchmark's prompts, which the worker has). `settle`
    is synchronous for the engine: it is sent at once, and this worker's next admit or take
    waits for it, so the ledger sees one worker's messages in order. Once a call to the ledger
    finds it dead, the gate admits nothing and refuses every call (see the module's docstring)."""

    def __init__(self, ledger: Any, spec: Any):
        self.ledger = ledger
        self.local = BudgetGate(spec, {}, {})
        self.refused: str | None = None
        self.why: str | None = None
        self.lost = False
        """The ledger died: nothing more is admitted or taken."""
        self._sent: list[Any] = []

    @property
    def stopped_by(self) -> str:
        """What a run this gate stopped counts as: a lost ledger is an error, not the budget."""
        return "error" if self.lost else "budget"

    async def need(self, task: Task, actor_prompt: Prompt | None, answer: str | None,
                   judged: bool, critic: bool) -> dict[str, float]:
        return await self.local.need(task, actor_prompt, answer, judged, critic)

    async def _call(self, ref: Any) -> Any:
        """The ledger's answer; LedgerLost when it is dead (now or before)."""
        import ray

        try:
            return await ref
        except ray.exceptions.RayActorError:
            self.lost, self.refused, self.why = True, "budget", LEDGER_LOST
            raise LedgerLost(LEDGER_LOST) from None

    async def _drain(self) -> None:
        sent, self._sent = self._sent, []
        for ref in sent:
            await self._call(ref)

    async def admit(self, need: dict[str, float]) -> LedgerTicket | None:
        if self.lost:
            return None
        job = JOB.get()
        try:
            await self._drain()
            tid, why = await self._call(self.ledger.admit.remote(job, need))
        except LedgerLost:
            return None
        if tid is None:
            self.refused, self.why = "budget", why
            return None
        ticket = LedgerTicket(dict(need), tid=tid, job=job)
        _TICKET.set(ticket)  # the attempt's calls run in this task's context, as in BudgetGate
        return ticket

    async def take(self, ticket: LedgerTicket, role: str, worst: float) -> None:
        if self.lost:
            raise LedgerLost(LEDGER_LOST)
        await self._drain()
        refused = await self._call(self.ledger.take.remote(ticket.tid, role, worst))
        if refused is not None:
            self.refused, self.why = "budget", refused[1]
            raise BudgetRefused(refused[0])

    async def paid(self, ticket: LedgerTicket, role: str, worst: float, cost: float) -> None:
        # The call's cost is in its record whatever happens here; a lost ledger only loses the count.
        with contextlib.suppress(LedgerLost):
            await self._call(self.ledger.paid.remote(ticket.tid, role, worst, cost))

    def settle(self, ticket: Ticket, calls: Sequence[CallRecord]) -> None:
        assert isinstance(ticket, LedgerTicket)
        if not self.lost:
            self._sent.append(self.ledger.settle.remote(ticket.job, ticket.tid, list(calls)))

    def describe(self) -> str:
        return self.why or "budget reached"


class RemotePool(BudgetedPool):
    """The worker engine's model pool, every call held to its attempt's reservation in the ledger:
    BudgetedPool, with the gate's calls awaited."""

    def holds(self, ticket: Ticket | None) -> bool:
        return isinstance(ticket, LedgerTicket)

    async def take(self, ticket: Any, role: str, worst: float) -> None:
        await self.gate.take(ticket, role, worst)

    async def paid(self, ticket: Any, role: str, worst: float, cost: float) -> None:
        await self.gate.paid(ticket, role, worst, cost)
