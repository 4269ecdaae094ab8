"""The verdicts a running viewer keeps (`seqk view`): each seq@k run's verdict (seqk.view.verdict),
kept with the fingerprint of what it was computed from and computed again only when that changes.

A verdict's key is the report's seed and resamples, the run's plan (its settings and partners) and
the fingerprint of each run it reads (sql/fingerprints.sql run_fingerprints: a hash of the run's
row and of every one of its chain_kept rows). A new attempt, a retried error or a late call
replaces chain_kept rows, an extension or a restart changes the run's row, a re-judging run is a
new run: each changes a fingerprint, and only the verdicts that read that run are computed again.
The fingerprints are read again only when the store's stamp changes (a file's size and time, a
lake's snapshot), so a page that polls while nothing is written reads nothing.

Verdicts are computed on worker threads: the database is read once for their chains (a short
read-only open, so a run in progress keeps writing), then numpy works with the database closed. A
page waits for them up to `wait_s`, then shows those ready and says "computing" for the others;
each verdict that is done bumps `version`, which the page's poll reads (seqk.view.app), so the
page fills them in.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from seqk.stats import DEFAULT_N_BOOT, DEFAULT_SEED
from seqk.store import Database, queries
from seqk.view.verdict import RunVerdict, VerdictPlan, compute_verdicts, plan_verdicts, read_inputs, with_q_values

WAIT_S = 0.5
"""How long a page waits for verdicts being computed before it shows them as computing."""

OPEN_WAIT_S = 5.0
"""How long a read waits for a writing run to release the database (as the pages do)."""


@dataclass(frozen=True)
class Found:
    """The verdicts a page asked for: those ready, and the seq@k runs whose verdict is computing."""

    verdicts: dict[str, RunVerdict]
    """With q-values across them once none is pending (seqk.view.verdict.with_q_values)."""
    pending: frozenset[str]


class VerdictCache:
    """Verdicts of one store, kept by key, computed on `workers` threads."""

    def __init__(self, database: Database, *, seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_N_BOOT,
                 workers: int = 2) -> None:
        self.database, self.seed, self.n_boot = database, seed, n_boot
        self._lock = threading.Lock()
        self._seen: tuple[str, dict[str, VerdictPlan], dict[str, tuple[Any, ...]]] | None = None
        self._kept: dict[str, tuple[tuple[Any, ...], RunVerdict]] = {}
        self._running: dict[str, tuple[tuple[Any, ...], Future[None]]] = {}
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="seqk-verdicts")
        self.version = 0
        """Bumped by each verdict computed (what the pages' poll compares)."""
        self.n_computed = 0
        """Verdicts computed so far (what the tests count)."""
        self.n_fingerprinted = 0
        """Times the fingerprints were read (once per new stamp)."""

    def _current(self) -> tuple[dict[str, VerdictPlan], dict[str, tuple[Any, ...]]]:
        """Every seq@k run's plan and key, read again when the stamp has changed since."""
        stamp = self.database.stamp()  # before the reads: a write after it makes the next stamp new
        with self._lock:
            seen = self._seen
        if seen is not None and seen[0] == stamp:
            return seen[1], seen[2]
        with self.database.connect(read_only=True, wait_s=OPEN_WAIT_S) as con:
            plans = plan_verdicts(con)
            prints = {r["run_id"]: r["fingerprint"] for r in queries.run_fingerprints(con)} if plans else {}
        keys = {run_id: (self.seed, self.n_boot, plan, tuple(prints.get(i) for i in plan.run_ids))
                for run_id, plan in plans.items()}
        with self._lock:
            self._seen = (stamp, plans, keys)
            self.n_fingerprinted += 1
        return plans, keys

    def get(self, seq_run_ids: Sequence[str] | None = None, *, wait_s: float = WAIT_S) -> Found:
        """The verdicts of `seq_run_ids` (None: every seq@k run; ids that are no seq@k run are
        left out), waiting up to `wait_s` for those not kept; a failed computation's error is raised
        (the next call tries again)."""
        plans, keys = self._current()
        wanted = list(plans) if seq_run_ids is None else [i for i in dict.fromkeys(seq_run_ids) if i in plans]
        with self._lock:
            stale = [i for i in wanted if i not in self._kept or self._kept[i][0] != keys[i]]
            todo = [i for i in stale if i not in self._running or self._running[i][0] != keys[i]]
            if todo:
                future = self._pool.submit(self._compute, [plans[i] for i in todo], {i: keys[i] for i in todo})
                self._running |= {i: (keys[i], future) for i in todo}
            futures = {self._running[i][1] for i in stale if i in self._running}
        if futures:
            wait(futures, timeout=wait_s)
        for f in futures:
            if f.done() and f.exception() is not None:
                with self._lock:
                    self._running = {i: entry for i, entry in self._running.items() if entry[1] is not f}
                raise f.exception()  # type: ignore[misc]
        with self._lock:
            ready = {i: self._kept[i][1] for i in wanted if i in self._kept and self._kept[i][0] == keys[i]}
        pending = frozenset(wanted) - ready.keys()
        return Found(ready if pending else with_q_values(ready), pending)

    def _compute(self, plans: list[VerdictPlan], keys: dict[str, tuple[Any, ...]]) -> None:
        with self.database.connect(read_only=True, wait_s=OPEN_WAIT_S) as con:
            inputs = read_inputs(con, plans)

        def keep(verdict: RunVerdict) -> None:
            key = keys[verdict.seq_run_id]
            with self._lock:
                self._kept[verdict.seq_run_id] = (key, verdict)
                if self._running.get(verdict.seq_run_id, (None,))[0] == key:
                    del self._running[verdict.seq_run_id]
                self.version += 1
                self.n_computed += 1

        compute_verdicts(plans, inputs, seed=self.seed, n_boot=self.n_boot, on_done=keep)

    def close(self) -> None:
        """Stop the workers (a computation under way is finished first)."""
        self._pool.shutdown(wait=True, cancel_futures=True)
