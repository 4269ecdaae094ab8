"""The collector behind batch mode (seqk.run.rounds): it gathers the batched calls of every
task, sends them as provider batches when no task can go on without them, records each batch
before and after the provider sees it, finds batches an earlier invocation sent, and hands each
answer back to the attempt waiting for it."""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import hashlib
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from seqk import store
from seqk.config.runspec import RunSpec
from seqk.errors import ProviderError, TransientProviderError
from seqk.models import cost_usd
from seqk.models.base import Completion
from seqk.models.batch import FINAL_STATES, BatchProvider, BatchRequest, ItemResult, batch_provider
from seqk.models.endpoints import public_url
from seqk.models.role import RoleSpec
from seqk.records import Prompt, stored_prompt
from seqk.run.metering import now
from seqk.run.prepare import Prepared
from seqk.store import queries

MAX_ITEM_TRIES = 3
"""Tries of one call in one invocation: an item that failed transiently or expired goes into
the next batch up to this many times before its attempt records the error."""

SLOT: contextvars.ContextVar[tuple[int, int, dict[str, int]]] = contextvars.ContextVar("seqk_batch_slot")
"""(task_index, attempt_index, calls so far per role) of the attempt running in this context."""


def custom_id(task_index: int, attempt_index: int, role: str, n: int) -> str:
    """A call's id inside a batch: its slot, the same in every invocation (chain 1 for now)."""
    return f"t{task_index}-c1-a{attempt_index}-{role}-{n}"


def prompt_sha256(spec: RoleSpec, prompt: Prompt) -> str:
    """What a stored answer must match to be reused: the model, its settings and the prompt."""
    text = repr(sorted(spec.result_fields().items(), key=str)) + "\x00" + stored_prompt(prompt)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class BatchView:
    """One batch as the progress line and `seqk status` show it."""

    role: str
    model: str
    round: int
    n_items: int
    state: str
    submitted_at: datetime
    n_done: int = 0
    batch_id: str | None = None


@dataclass
class _Call:
    task_index: int
    attempt_index: int
    role: str
    custom_id: str
    spec: RoleSpec
    prompt: Prompt
    cache_prefix: str | None
    sha: str
    future: asyncio.Future[Completion]
    tries: int = 0


@dataclass
class _Batch:
    key: str
    provider: BatchProvider
    view: BatchView
    calls: list[_Call] = field(default_factory=list)
    started: float = field(default_factory=time.time)


class Deferred(Exception):  # noqa: N818 - a signal, not a failure
    """--no-wait: the batches are submitted and the run returns; a later run collects them."""


class Collector:
    """Gathers the batched calls of every task and sends them when no task can go on without them."""

    def __init__(self, spec: RunSpec, prepared: Prepared, db: store.Database,
                 poll_s: float, no_wait: bool, on_batch: Callable[[list[BatchView]], None] | None):
        self.spec, self.db, self.poll_s, self.no_wait = spec, db, poll_s, no_wait
        self.generation = prepared.generation
        self.on_batch = on_batch
        # How many batched calls each unfinished task can have waiting at once: one for a seq@k
        # chain, one per pending sample for pass@k. A task is blocked when all of them wait.
        self.expected = {t: (1 if spec.seq else len(idx)) for t, idx in prepared.pending.items()}
        self.waiting: list[_Call] = []
        self.views: list[BatchView] = []
        self.n_rounds = 0
        self.deferred = 0
        self._changed = asyncio.Event()
        self._providers: dict[tuple[str | None, ...], BatchProvider] = {}
        self._known: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self._results: dict[str, dict[str, ItemResult]] = {}
        self._in_flight: dict[str, _Batch] = {}
        self._batches: dict[str, _Batch] = {}
        self.parked: dict[int, int] = defaultdict(int)
        """task_index -> its attempts waiting for the budget gate (they count as waiting)."""
        self._loaded = False

    # -- what the engine tells it

    def slot_done(self, task_index: int) -> None:
        """A pass@k sample finished (or was never admitted): one less call to wait for."""
        if task_index in self.expected:
            self.expected[task_index] -= 1
        self._changed.set()

    def task_done(self, task_index: int) -> None:
        """The task has nothing more to run."""
        self.expected.pop(task_index, None)
        self._changed.set()

    async def request(self, spec: RoleSpec, prompt: Prompt, cache_prefix: str | None) -> Completion:
        """Queue one call for the next batch and wait for its answer (ProviderError on failure)."""
        task_index, attempt_index, counts = SLOT.get()
        counts[spec.role] = n = counts.get(spec.role, 0) + 1
        call = _Call(task_index, attempt_index, spec.role, custom_id(task_index, attempt_index, spec.role, n),
                     spec, prompt, cache_prefix, prompt_sha256(spec, prompt),
                     asyncio.get_running_loop().create_future())
        self.waiting.append(call)
        self._changed.set()
        return await call.future

    # -- the loop that sends them

    def blocked(self) -> bool:
        """Every unfinished task waits on a batched call (and at least one call waits)."""
        if not self.waiting:
            return False
        by_task: dict[int, int] = defaultdict(int, self.parked)
        for call in self.waiting:
            by_task[call.task_index] += 1
        return all(by_task[t] >= n for t, n in self.expected.items() if n > 0)

    async def loop(self, runner: asyncio.Task[Any]) -> None:
        """Send a round whenever the tasks are blocked; on --no-wait, stop the run once sent."""
        try:
            while True:
                await self._changed.wait()
                self._changed.clear()
                for _ in range(5):  # let woken attempts reach their next call before judging
                    await asyncio.sleep(0)
                if not self.blocked():
                    continue
                await self.round()
        except Deferred:
            runner.cancel()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            # A bug or an unreachable provider: every waiting attempt fails loudly with it.
            for call in self.waiting:
                if not call.future.done():
                    call.future.set_exception(exc)
            self.waiting.clear()
            raise

    async def round(self) -> None:
        """Send what waits (reusing what earlier invocations sent), poll until all of it is back,
        and hand every answer to its attempt; items that failed for a passing reason go again."""
        self.n_rounds += 1
        calls, self.waiting = self.waiting, []
        taken = list(calls)
        try:
            if not self._loaded:
                await asyncio.to_thread(self._load)
            while calls:
                fresh = await self._attach(calls)
                await self._submit(fresh)
                if self.no_wait and not await self._all_final():
                    self.deferred = len(self._in_flight)
                    raise Deferred
                calls = await self._collect()
                taken += calls
        except (Deferred, asyncio.CancelledError):
            raise
        except BaseException:
            # Back in the queue, so that the loop fails each with the error: a call taken out
            # for this round and never answered would leave its attempt waiting for ever.
            unanswered = {id(c): c for c in taken if not c.future.done()}
            self.waiting = [*unanswered.values(), *self.waiting]
            raise

    def _load(self) -> None:
        with self.db.connect(wait_s=60, checkpoint=False) as con:
            for row in queries.run_batch_items(con, run_id=self.spec.run_id, generation=self.generation):
                self._known[row["custom_id"]].append(row)
        self._loaded = True

    def _provider(self, spec: RoleSpec) -> BatchProvider:
        key = (spec.model, spec.api_base, spec.api_key_env)
        if key not in self._providers:
            self._providers[key] = batch_provider(spec)
        return self._providers[key]

    async def _attach(self, calls: list[_Call]) -> list[_Call]:
        """Join each call to the batch an earlier invocation sent for it, if any; the rest are new."""
        fresh = []
        for call in calls:
            row = next((r for r in reversed(self._known.pop(call.custom_id, []))
                        if r["prompt_sha256"] == call.sha and r["state"] != "lost"), None)
            batch = await self._recover(row, call) if row is not None else None
            if batch is None:
                fresh.append(call)
                continue
            done = self._results.get(batch.key)
            result = done.get(call.custom_id) if done is not None else None
            if done is None:
                batch.calls.append(call)
            elif result is not None and result.completion is not None:
                self._resolve(call, result, batch)
            else:
                fresh.append(call)  # it failed or expired last time: send it again
        return fresh

    async def _recover(self, row: dict[str, Any], call: _Call) -> _Batch | None:
        """The batch of a recorded item, found again at the provider (None: it never got there)."""
        key = row["batch_key"]
        if key in self._batches:
            return self._batches[key]
        provider = self._provider(call.spec)
        view = BatchView(row["role"], row["model"], call.attempt_index, row["n_items"], row["state"],
                         row["submitted_at"], batch_id=row["batch_id"])
        batch = _Batch(key, provider, view, started=row["submitted_at"].replace(tzinfo=UTC).timestamp())
        if view.batch_id is None:
            # Killed between recording and the provider's answer: the provider may hold it anyway.
            since = row["submitted_at"].replace(tzinfo=UTC).timestamp()
            view.batch_id = await provider.find(key, row["n_items"], since)
            if view.batch_id is None:
                await self._record(key, None, "lost", None)
                return None
            await self._record(key, view.batch_id, "in_progress", None)
        self._in_flight[key] = self._batches[key] = batch
        self.views.append(view)
        if row["state"] in FINAL_STATES:
            self._results[key] = await provider.results(view.batch_id)
            del self._in_flight[key]
        return batch

    async def _submit(self, calls: list[_Call]) -> None:
        groups: dict[tuple[Any, ...], list[_Call]] = defaultdict(list)
        for call in calls:
            groups[(call.role, call.spec.model, call.spec.api_base, call.spec.api_key_env)].append(call)
        for group in groups.values():
            provider = self._provider(group[0].spec)
            chunk: list[_Call] = []
            size = 0
            for call in group:
                n = provider.request_bytes(self._request(call))
                if chunk and (len(chunk) >= provider.max_items or size + n > provider.max_bytes):
                    await self._send(provider, chunk)
                    chunk, size = [], 0
                chunk.append(call)
                size += n
            if chunk:
                await self._send(provider, chunk)

    @staticmethod
    def _request(call: _Call) -> BatchRequest:
        return BatchRequest(call.custom_id, call.spec, call.prompt, call.cache_prefix)

    async def _send(self, provider: BatchProvider, calls: list[_Call]) -> None:
        key = "seqk-" + uuid.uuid4().hex
        first = calls[0]
        view = BatchView(first.role, first.spec.model or "", min(c.attempt_index for c in calls),
                         len(calls), "submitting", now())
        await asyncio.to_thread(self._insert, key, provider.name, first.spec, view, calls)
        self.views.append(view)
        self._emit()
        batch_id = await provider.submit([self._request(c) for c in calls], key)
        view.batch_id, view.state = batch_id, "in_progress"
        await self._record(key, batch_id, "in_progress", 0)
        self._in_flight[key] = self._batches[key] = _Batch(key, provider, view, list(calls))
        for call in calls:
            call.tries += 1

    def _insert(self, key: str, provider: str, spec: RoleSpec, view: BatchView, calls: list[_Call]) -> None:
        with self.db.connect(wait_s=60, checkpoint=False) as con, store.transaction(con):
            queries.insert_batch(con, batch_key=key, run_id=self.spec.run_id, generation=self.generation,
                                 provider=provider, model=spec.model,
                                 api_base=public_url(spec.api_base) if spec.api_base else None,
                                 role=view.role, round=view.round, n_items=view.n_items, at=view.submitted_at)
            queries.insert_batch_items(
                con, batch_key=key, run_id=self.spec.run_id, generation=self.generation,
                custom_ids=[c.custom_id for c in calls], task_indices=[c.task_index for c in calls],
                attempt_indices=[c.attempt_index for c in calls], roles=[c.role for c in calls],
                prompt_sha256s=[c.sha for c in calls])

    async def _record(self, key: str, batch_id: str | None, state: str, n_done: int | None) -> None:
        at = now()

        def write() -> None:
            with self.db.connect(wait_s=60, checkpoint=False) as con:
                queries.set_batch_state(con, batch_key=key, batch_id=batch_id, state=state, n_done=n_done,
                                        at=at, finished_at=at if state in FINAL_STATES + ("lost",) else None)

        await asyncio.to_thread(write)

    async def _all_final(self) -> bool:
        for batch in list(self._in_flight.values()):
            status = await batch.provider.poll(batch.view.batch_id or "")
            if status.state not in FINAL_STATES:
                return False
        return True

    async def _collect(self) -> list[_Call]:
        """Poll the batches in flight until each is final; resolve their calls. The calls to try
        again (a transient failure or expiry, tries left) come back."""
        again: list[_Call] = []
        while self._in_flight:
            for key, batch in list(self._in_flight.items()):
                status = await batch.provider.poll(batch.view.batch_id or "")
                changed = (status.state, status.n_done) != (batch.view.state, batch.view.n_done)
                batch.view.state, batch.view.n_done = status.state, status.n_done
                if status.state in FINAL_STATES:
                    results = await batch.provider.results(batch.view.batch_id or "")
                    await self._record(key, batch.view.batch_id, status.state, status.n_done)
                    del self._in_flight[key]
                    for call in batch.calls:
                        result = results.get(call.custom_id) or ItemResult(call.custom_id, error=TransientProviderError(
                            f"the batch ended {status.state} without this item", kind="BatchExpired"))
                        if (result.completion is None and isinstance(result.error, TransientProviderError)
                                and call.tries < MAX_ITEM_TRIES):
                            again.append(call)
                        else:
                            self._resolve(call, result, batch)
                elif changed:
                    await self._record(key, batch.view.batch_id, status.state, status.n_done)
                if changed:
                    self._emit()
            if self._in_flight:
                await asyncio.sleep(self.poll_s)
        return again

    def _resolve(self, call: _Call, result: ItemResult, batch: _Batch) -> None:
        if call.future.done():
            return
        if result.completion is None:
            error = result.error or ProviderError("the batch returned nothing for this item")
            error.retries = max(call.tries - 1, 0)
            call.future.set_exception(error)
            return
        c = dataclasses.replace(result.completion, model=call.spec.model or "", price_tier="batch",
                                latency_s=max(time.time() - batch.started, 0.0), retries=max(call.tries - 1, 0))
        c.cost_usd = cost_usd(c.model, c.input_tokens, c.cached_tokens, c.output_tokens, call.spec.price,
                              call.spec.api_base, cache_write_tokens=c.cache_write_tokens, tier="batch")
        call.future.set_result(c)

    def _emit(self) -> None:
        if self.on_batch is not None:
            self.on_batch(list(self.views))  # the engine's guarded observer: it never raises
