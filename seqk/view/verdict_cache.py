"""The verdicts a running viewer keeps (`seqk view`): each seq@k run's verdict (seqk.view.verdict),
kept with the fingerprint of what it was computed from and computed again only when that changes;
and the same for each seq@k run's equal-budget chart on the run list (seqk.view.budget).

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
page fills them in. The charts the same way (their SQL, frontier_rows, holds the connection while
it runs: 2 s for 40 charts over a million attempts).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from seqk.stats import DEFAULT_N_BOOT, DEFAULT_SEED
from seqk.store import Database, queries
from seqk.view.budget import BudgetChart, budget_charts, chart_partners
from seqk.view.verdict import RunVerdict, VerdictPlan, compute_verdicts, plan_verdicts, read_inputs, with_q_values

WAIT_S = 0.5
"""How long a page waits for verdicts being computed before it shows them as computing."""

OPEN_WAIT_S = 5.0
"""How long a read waits for a writing run to release the database (as the pages do)."""


_Seen = tuple[str, dict[str, VerdictPlan], dict[str, tuple[Any, ...]], dict[str, dict[str, Any] | None], bool]
"""What VerdictCache._current read at one stamp: the stamp, every plan, the keys, the
run_fingerprints rows read (None for a run without one; the verdicts' workers key the runs' chains
by them and do not read them again), and whether they are every run's."""


def _prints(rows: dict[str, dict[str, Any] | None]) -> dict[str, Any]:
    """Each run's fingerprint (None for a run without a run_fingerprints row)."""
    return {run_id: None if row is None else row["fingerprint"] for run_id, row in rows.items()}


def _unread(seen: _Seen, needed: Sequence[str] | None) -> set[str]:
    """The runs whose fingerprint is wanted and not among `seen`'s: every run's (`needed` None),
    else those the plans of `needed` read."""
    plans, rows, every = seen[1], seen[3], seen[4]
    if needed is None:
        return set() if every else {"every run"}
    return {i for run_id in needed if run_id in plans for i in plans[run_id].run_ids} - rows.keys()


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
        self._seen: _Seen | None = None
        self._charts: dict[str, tuple[tuple[Any, ...], BudgetChart | None]] = {}
        self._charting: dict[str, tuple[tuple[Any, ...], Future[None]]] = {}
        self._kept: dict[str, tuple[tuple[Any, ...], RunVerdict]] = {}
        self._running: dict[str, tuple[tuple[Any, ...], Future[None]]] = {}
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="seqk-verdicts")
        self.version = 0
        """Bumped by each verdict and each batch of charts computed (what the pages' poll compares)."""
        self.n_computed = 0
        """Verdicts computed so far (what the tests count)."""
        self.n_fingerprinted = 0
        """Times the fingerprints were read (once per new stamp, and again for runs not read yet)."""
        self.n_charted = 0
        """Equal-budget charts computed so far."""

    def _current(self, con: Any = None, needed: Sequence[str] | None = None,
                 ) -> tuple[dict[str, VerdictPlan], dict[str, tuple[Any, ...]], dict[str, int],
                            dict[str, dict[str, Any] | None]]:
        """Every seq@k run's plan, the key of each one whose runs' fingerprints are read, and those
        fingerprints and their rows: of every run (`needed` None, as the run list asks), else at least of the runs
        the plans of `needed` (seq@k run ids) read, so a run's page hashes its own runs' chains only.
        Read again (on `con`, else a connection of its own) when the stamp has changed since, or for
        a fingerprint not read yet."""
        stamp = self.database.stamp()  # before the reads: a write after it makes the next stamp new
        with self._lock:
            seen = self._seen
        if seen is not None and seen[0] != stamp:
            seen = None
        if seen is not None and not _unread(seen, needed):
            return seen[1], seen[2], _prints(seen[3]), seen[3]
        if con is None:
            with self.database.connect(read_only=True, wait_s=OPEN_WAIT_S) as own:
                return self._current(own, needed)
        plans = seen[1] if seen is not None else plan_verdicts(con)
        rows_of, every = (dict(seen[3]), seen[4]) if seen is not None else ({}, False)
        if plans:
            unread = _unread((stamp, plans, {}, rows_of, every), needed)
            rows = queries.run_fingerprints(con, run_ids=None if needed is None else sorted(unread))
            if needed is not None:  # a run without a row reads as None, as .get has it, once
                rows_of |= dict.fromkeys(unread)
            rows_of |= {r["run_id"]: r for r in rows}
        every = every or needed is None
        prints = _prints(rows_of)
        keys = {run_id: (self.seed, self.n_boot, plan, tuple(prints.get(i) for i in plan.run_ids))
                for run_id, plan in plans.items() if all(i in prints for i in plan.run_ids)}
        with self._lock:
            self._seen = (stamp, plans, keys, rows_of, every)
            self.n_fingerprinted += 1
        return plans, keys, prints, rows_of

    def fingerprints(self, con: Any, run_ids: Sequence[str], *, every: bool = False) -> dict[str, Any]:
        """Each given run's run_fingerprints fingerprint (None for a run without a row): those read
        at the store's current stamp (`_current`; with `every`, every run's read and kept for the
        verdicts first, as the run list needs), the others read on `con` (what the run list's rows
        are remembered under: seqk.view.pages.view_rows)."""
        if every:
            known: dict[str, Any] = dict(self._current(con)[2])
        else:
            stamp = self.database.stamp()
            with self._lock:
                seen = self._seen
            known = _prints(seen[3]) if seen is not None and seen[0] == stamp else {}
        unread = sorted(set(run_ids) - known.keys())
        if unread:
            known |= dict.fromkeys(unread)
            known |= {r["run_id"]: r["fingerprint"] for r in queries.run_fingerprints(con, run_ids=unread)}
        return {run_id: known[run_id] for run_id in run_ids}

    def want_charts(self, con: Any, runs: Sequence[Any]) -> dict[str, tuple[Any, ...]]:
        """The key of each equal-budget chart of the run list (budget_charts(con, runs); `runs`:
        pages.RunSummary), by seq@k run: its two runs' fingerprints and its unit. Those not kept
        start computing on a worker; `charts_of` collects them."""
        prints = self._current(con)[2]
        by_id = {r.run_id: r for r in runs}
        partners = chart_partners(con, runs)
        keys = {}
        for p in partners:
            seq, partner = by_id[p["seq_run_id"]], by_id[p["pass_run_id"]]
            # the unit's choice, not the sums (summed in parallel, their last bits vary from read to read)
            usd = all(r.n_unpriced_calls == 0 and r.cost_usd for r in (seq, partner))
            keys[seq.run_id] = (partner.run_id, p["pass_k"], prints.get(seq.run_id), prints.get(partner.run_id), usd)
        with self._lock:
            todo = [p for p in partners if self._charts.get(p["seq_run_id"], (None,))[0] != keys[p["seq_run_id"]]
                    and self._charting.get(p["seq_run_id"], (None,))[0] != keys[p["seq_run_id"]]]
            if todo:
                future = self._pool.submit(self._chart, list(runs), todo, keys)
                self._charting |= {p["seq_run_id"]: (keys[p["seq_run_id"]], future) for p in todo}
        return keys

    def charts_of(self, keys: dict[str, tuple[Any, ...]], *, wait_s: float = WAIT_S,
                  ) -> tuple[dict[str, BudgetChart], frozenset[str]]:
        """The charts `want_charts` keyed (those with a chart; a run whose frontiers draw fewer than
        two lines has none), waiting up to `wait_s`, and the seq@k runs whose chart is computing."""
        with self._lock:
            futures = {self._charting[i][1] for i, key in keys.items()
                       if i in self._charting and self._charting[i][0] == key}
        self._settle(futures, wait_s, "_charting")
        with self._lock:
            ready = {i: self._charts[i][1] for i, key in keys.items()
                     if i in self._charts and self._charts[i][0] == key}
        return ({i: chart for i, chart in ready.items() if chart is not None}, frozenset(keys) - ready.keys())

    def _settle(self, futures: set[Future[None]], wait_s: float, table: str) -> None:
        """Wait up to `wait_s` for `futures` (computations under way); a failed one is forgotten
        from `table` ("_charting" or "_running": the next call tries again) and its error raised."""
        if futures:
            wait(futures, timeout=wait_s)
        for f in futures:
            error = f.exception() if f.done() else None
            if error is not None:
                with self._lock:
                    setattr(self, table, {i: entry for i, entry in getattr(self, table).items() if entry[1] is not f})
                raise error

    def _chart(self, runs: list[Any], partners: list[dict[str, Any]], keys: dict[str, tuple[Any, ...]]) -> None:
        with self.database.connect(read_only=True, wait_s=OPEN_WAIT_S) as con:
            made = budget_charts(con, runs, partners)
        with self._lock:
            for p in partners:
                run_id = p["seq_run_id"]
                self._charts[run_id] = (keys[run_id], made.get(run_id))
                if self._charting.get(run_id, (None,))[0] == keys[run_id]:
                    del self._charting[run_id]
            self.n_charted += len(partners)
            self.version += 1

    def plan(self, seq_run_ids: Sequence[str], *, con: Any) -> None:
        """Read (on `con`) the plans and fingerprints the verdicts of `seq_run_ids` are keyed by,
        at the store's current stamp, without starting to compute them: a page reads them before
        its own rows and starts the verdicts (`get`) after."""
        self._current(con, list(seq_run_ids))

    def get(self, seq_run_ids: Sequence[str] | None = None, *, wait_s: float = WAIT_S, con: Any = None) -> Found:
        """The verdicts of `seq_run_ids` (None: every seq@k run; ids that are no seq@k run are
        left out), waiting up to `wait_s` for those not kept (0: only start computing them); a
        failed computation's error is raised (the next call tries again). `con`: an open
        connection to read the plans and fingerprints on, else one of its own."""
        plans, keys, _, rows_of = self._current(con, None if seq_run_ids is None else list(seq_run_ids))
        wanted = list(plans) if seq_run_ids is None else [i for i in dict.fromkeys(seq_run_ids) if i in plans]
        with self._lock:
            stale = [i for i in wanted if i not in self._kept or self._kept[i][0] != keys[i]]
            todo = [i for i in stale if i not in self._running or self._running[i][0] != keys[i]]
            if todo:
                future = self._pool.submit(self._compute, [plans[i] for i in todo], {i: keys[i] for i in todo},
                                           {i: rows_of[i] for p in todo for i in plans[p].run_ids if i in rows_of})
                self._running |= {i: (keys[i], future) for i in todo}
            futures = {self._running[i][1] for i in stale if i in self._running}
        self._settle(futures, wait_s, "_running")
        with self._lock:
            ready = {i: self._kept[i][1] for i in wanted if i in self._kept and self._kept[i][0] == keys[i]}
        pending = frozenset(wanted) - ready.keys()
        return Found(ready if pending else with_q_values(ready), pending)

    def _compute(self, plans: list[VerdictPlan], keys: dict[str, tuple[Any, ...]],
                 prints: dict[str, dict[str, Any] | None]) -> None:
        # the chains keyed by the fingerprints the verdicts are keyed by (read before them, at the
        # stamp the page read): a write since shows as a new fingerprint at the next page's stamp
        with self.database.connect(read_only=True, wait_s=OPEN_WAIT_S) as con:
            inputs = read_inputs(con, plans, prints)

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
