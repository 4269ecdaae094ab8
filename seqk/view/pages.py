"""The data of the run list and of a run's page, as typed records: what each page shows,
read from the store in one short read-only open, so a run in progress keeps writing.

No web framework here: a notebook can call these, and the templates only lay them out.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from seqk import store
from seqk.analysis.memo import REPORT_SOURCES, remembered_each
from seqk.analysis.study import StudySummary, studies_in
from seqk.errors import NotFound
from seqk.records import RunSettings
from seqk.store import queries
from seqk.view.budget import BudgetChart, budget_charts
from seqk.view.verdict import RunVerdict, verdicts
from seqk.view.verdict_cache import WAIT_S as WAIT_VERDICTS_S
from seqk.view.verdict_cache import VerdictCache

T = TypeVar("T")

PAGE_SIZE = 100
"""Tasks per page of a run's task table."""

FILTERS: dict[str, str] = {
    "all": "all tasks",
    "feedback_only": "solved only with feedback (seq@K yes, pass@K no)",
    "resample_only": "solved only by resampling (pass@K yes, seq@K no)",
    "never": "never solved (by either run)",
    "errored": "with an errored attempt",
}
"""The task table's filters, by the name the URL carries, and what each one keeps."""

WAIT_S = 5.0
"""How long a page waits for a writing run to release the database before it says so."""


@dataclass(frozen=True)
class CurvePoint:
    """metric@t over n_tasks tasks (n_left_out more whose outcome at t is unknown: errors
    excluded), with its 95% Wilson interval [low, high]."""

    t: int
    n_tasks: int
    value: float | None
    low: float | None
    high: float | None
    n_left_out: int = 0


@dataclass(kw_only=True)
class RunSummary(RunSettings):
    """One run as the run list shows it: its settings, progress, spend and curve (read, never
    changed)."""

    shows_grading_info: bool | None
    temperature: float | None
    n_tasks: int
    n_started: int
    n_finished: int
    n_passed: int
    """Tasks with a valid success in any chain (run_progress_of, as `seqk status` counts them)."""
    n_valid_attempts: int
    n_error_attempts: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    n_unpriced_calls: int
    n_failed_calls: int
    pass_run_id: str | None
    """The pass@k run this seq@k run is compared with (run_pairs), None otherwise."""
    curve: list[CurvePoint]

    @property
    def in_progress(self) -> bool:
        """Whether some registered task has attempts still to run (or errors to retry)."""
        return self.n_finished < self.n_tasks

    @property
    def last(self) -> CurvePoint | None:
        """metric@K, the curve's last point."""
        return self.curve[-1] if self.curve else None


@dataclass(frozen=True)
class RunGroup:
    """A pass@k run and the seq@k runs compared with it (either side may be missing)."""

    pass_run: RunSummary | None
    seq_runs: list[RunSummary]

    @property
    def title(self) -> str:
        """benchmark slice · actor · k, which every run of the group shares."""
        run = self.pass_run or self.seq_runs[0]
        return f"{run.slice} · {run.actor_model} · k={run.k}"


@dataclass(frozen=True)
class RunsPage:
    """`/`: every run, seq@k runs grouped with their pass@k partner."""

    db: str
    groups: list[RunGroup]
    n_runs: int
    budgets: dict[str, BudgetChart] = field(default_factory=dict)
    """seq@k run id -> its equal-budget chart against its budget partner, where it has one."""
    studies: list[StudySummary] = field(default_factory=list)
    """Sequential studies (seqk.analysis.study), oldest first."""
    verdicts: dict[str, RunVerdict] = field(default_factory=dict)
    """seq@k run id -> its lift, framing and equal-budget figures, as `seqk report --compare`."""
    computing: frozenset[str] = frozenset()
    """seq@k runs whose verdict a running viewer is still computing (seqk.view.verdict_cache)."""
    charts_computing: frozenset[str] = frozenset()
    """seq@k runs whose equal-budget chart a running viewer is still computing."""


@dataclass(frozen=True)
class Cell:
    """The slot that counts at one attempt index of a task."""

    i: int
    status: str
    success: bool | None


@dataclass(frozen=True)
class TaskRow:
    """One task of a run's task table."""

    task_index: int
    task_id: str
    cells: list[Cell]
    first_success: int | None
    n_error: int
    seq_at_k: float | None
    """The seq@k run's value at K for this task (NULL when left out or not shared)."""
    pass_at_k: float | None
    cost_usd: float | None
    tokens: int
    n_failed_calls: int


@dataclass(frozen=True)
class RunPage:
    """`/runs/<run_id>`: the run's curve beside its partner's, and one page of its tasks."""

    run: dict[str, Any]
    """The run's row (every column of runs)."""
    seq_run_id: str | None
    pass_run_id: str | None
    other_partners: list[str]
    """For a pass@k run, the other seq@k runs compared with it."""
    summaries: dict[str, RunSummary]
    """run_id -> its summary and curve: this run and its partner."""
    tasks: list[TaskRow]
    filter: str
    search: str
    page: int
    n_pages: int
    n_matching: int
    """Tasks that pass the filter and the search, on every page."""
    upto: int | None = None
    """Only tasks 1..upto are listed (a bounded bundle), None for every task."""
    verdicts: list[RunVerdict] = field(default_factory=list)
    """The lift, framing and equal-budget figures, as `seqk report --compare`, of this seq@k run, or
    of each seq@k run compared with this pass@k run."""
    computing: list[str] = field(default_factory=list)
    """The seq@k runs among those whose verdict a running viewer is still computing."""

    @property
    def partner_id(self) -> str | None:
        """The run this one is compared with."""
        return self.pass_run_id if self.run["metric"] == "seq@k" else self.seq_run_id

    @property
    def summary(self) -> RunSummary:
        """This run's progress, errors, spend and curve."""
        return self.summaries[self.run["run_id"]]


class ReadsKept:
    """What a page read from the store, kept by the page's name until the store's stamp changes
    (a running viewer's, its page cache on): a page made again because a verdict or a chart was done
    meanwhile reads nothing, where it read every run's kept chains again. The stamp is taken before
    the reads, so a write during them makes the next one read again; the `size` latest are kept."""

    def __init__(self, database: store.Database, size: int = 64) -> None:
        self.database, self.size = database, size
        self._lock = threading.Lock()
        self._kept: OrderedDict[tuple[Any, ...], tuple[str, Any]] = OrderedDict()

    def get(self, name: tuple[Any, ...], read: Callable[[], T]) -> T:
        """`read()`'s value, read again only when the stamp has changed since it was kept."""
        stamp = self.database.stamp()
        with self._lock:
            hit = self._kept.get(name)
            if hit is not None and hit[0] == stamp:
                self._kept.move_to_end(name)
                return cast(T, hit[1])
        value = read()
        with self._lock:
            self._kept[name] = (stamp, value)
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)
        return value


def _read(reads: ReadsKept | None, name: tuple[Any, ...], read: Callable[[], T]) -> T:
    return read() if reads is None else reads.get(name, read)


VIEW_ROWS = "view-runs 2"
"""The figure cache's kind for a run's view_runs row (its number moves when the row changes shape)."""


def view_rows(con: Any, run_ids: list[str] | None,
              prints: Callable[[list[str]], dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """queries.view_runs(con, run_ids=run_ids)'s rows, each run's read back from the figure cache
    (seqk.analysis.memo) while its run_fingerprints fingerprint is the one it was read under:
    every column but n_tasks and pass_run_id is a function of the run's runs row and kept chains
    (sql/view.sql), which the fingerprint hashes; those two are read afresh (view_runs_now). So
    the run list of a store where one run changed queries that run's chains only (at 10 M
    attempts view_runs over every run is 0.7 s, docs/performance.md). `prints(run ids)` gives the
    fingerprints (a viewer's VerdictCache has read them already), else they are read here.

    The fingerprints are always read before the rows: on a lake a commit can land between the two
    reads, and then a run's newer rows are kept under its older fingerprint, which no later read
    sees again (a run's kept chains only grow); the other way round, older rows under a newer
    fingerprint, would be read back as current, and cannot happen."""
    now = queries.view_runs_now(con, run_ids=run_ids)
    ids = [r["run_id"] for r in now]

    def parts() -> dict[str, tuple[Any, ...]]:
        found = prints(ids) if prints is not None else {
            r["run_id"]: r["fingerprint"] for r in queries.run_fingerprints(con, run_ids=ids)}
        return {run_id: (run_id, found.get(run_id)) for run_id in ids}

    def read(missed: list[str]) -> dict[str, dict[str, Any]]:
        every = run_ids is None and len(missed) == len(ids)  # NULL reads faster than a list of all
        return {r["run_id"]: r for r in queries.view_runs(con, run_ids=None if every else missed)}

    kept = remembered_each(VIEW_ROWS, parts, read, ids, sources=REPORT_SOURCES)
    return [kept[r["run_id"]] | r for r in now if r["run_id"] in kept]


def _summaries(con: Any, run_ids: list[str] | None,
               prints: Callable[[list[str]], dict[str, Any]] | None = None) -> list[RunSummary]:
    runs = []
    for r in view_rows(con, run_ids, prints):  # each a new dict (view_rows' union): changed here
        r["curve"] = [CurvePoint(**p) for p in r["curve"]]
        runs.append(RunSummary(**r))
    return runs


def runs_page(db: store.DbLike = None, *, kept: VerdictCache | None = None,
              reads: ReadsKept | None = None) -> RunsPage:
    """Every run with its progress, errors, spend and curve, grouped by pass@k partner; the
    verdicts and equal-budget charts from `kept` when given (the verdicts it is computing left
    out), else computed here; the runs and studies from `reads` while the store is unchanged."""
    start = time.monotonic()
    database = store.open(db)
    with database.connect(read_only=True, wait_s=WAIT_S) as con:
        # the runs' rows first (keyed by the fingerprints the verdicts are keyed by, read once), then
        # the verdicts start computing: on 2 cores a verdict's read of every chain beside the rows'
        # SQL slowed a first request at 10 M attempts from 1.1 to 1.75 s (docs/performance.md)
        prints = None if kept is None else (lambda ids: kept.fingerprints(con, ids, every=True))
        runs, studies = _read(reads, ("runs",), lambda: (_summaries(con, None, prints), studies_in(con)))
        if kept is not None:
            kept.get(wait_s=0.0, con=con)
        charts = kept.want_charts(con, runs) if kept is not None else None
        budgets = budget_charts(con, runs) if kept is None else {}
    by_id = {r.run_id: r for r in runs}
    groups: dict[str, RunGroup] = {}
    for run in runs:
        if run.metric == "pass@k":
            groups.setdefault(run.run_id, RunGroup(run, []))
    for run in runs:
        if run.metric == "pass@k":
            continue
        if run.pass_run_id in by_id:
            groups[run.pass_run_id].seq_runs.append(run)
        else:
            groups[run.run_id] = RunGroup(None, [run])
    # Comparisons first: a group with both a pass@k run and a seq@k run answers the question.
    ordered = sorted(groups.values(), key=lambda g: (not (g.pass_run and g.seq_runs), g.title,
                                                     (g.pass_run or g.seq_runs[0]).run_id))
    found, computing, charting = {}, frozenset[str](), frozenset[str]()
    if kept is not None and charts is not None:
        deadline = start + WAIT_VERDICTS_S  # one wait for both, from the request's start
        answer = kept.get(wait_s=max(0.0, deadline - time.monotonic()))
        found, computing = answer.verdicts, answer.pending
        budgets, charting = kept.charts_of(charts, wait_s=max(0.0, deadline - time.monotonic()))
    elif any(r.metric == "seq@k" for r in runs):
        found = verdicts(database)
    return RunsPage(database.display, ordered, len(runs), budgets, studies, found, computing, charting)


def run_page(run_id: str, db: store.DbLike = None, *, filter: str = "all", search: str = "",
             page: int = 1, upto: int | None = None,
             known: dict[str, RunVerdict] | None = None, kept: VerdictCache | None = None,
             reads: ReadsKept | None = None) -> RunPage:
    """One run's curve (and its partner's) and one page of its tasks, filtered and searched;
    `known` holds verdicts already computed (a bundle computes every run's once), `kept` a running
    viewer's (those it is computing left out), `reads` its reads while the store is unchanged."""
    if filter not in FILTERS:
        raise NotFound(f"no task filter named {filter!r}; the filters are {', '.join(FILTERS)}")
    page = max(page, 1)
    start = time.monotonic()
    database = store.open(db)
    with database.connect(read_only=True, wait_s=WAIT_S) as con:
        run, partners = _read(reads, ("run", run_id), lambda: (
            store.get_run(con, run_id), queries.view_partners(con, run_id=run_id)))
        if run is None:
            raise NotFound(f"no run {run_id!r} in {database}")
        seq_id: str | None
        pass_id: str | None
        if run["metric"] == "seq@k":
            seq_id, pass_id = run_id, (partners[0]["pass_run_id"] if partners else None)
            others: list[str] = []
        else:
            pass_id = run_id
            seq_id = partners[0]["seq_run_id"] if partners else None
            others = [p["seq_run_id"] for p in partners[1:]]
        seq_ids = [i for i in (seq_id, *others) if i is not None]
        computes = kept if known is None and seq_ids else None
        if computes is not None:  # what the verdicts are keyed by, read first (the summaries are keyed by it too)
            computes.plan(seq_ids, con=con)
        summaries = _read(reads, ("summaries", seq_id, pass_id), lambda: {
            r.run_id: r for r in _summaries(con, [i for i in (seq_id, pass_id) if i is not None],
                                            None if kept is None else (lambda ids: kept.fingerprints(con, ids)))})
        rows = _read(reads, ("tasks", run_id, filter, search.strip(), page, upto), lambda: queries.view_run_tasks(
            con, run_id=run_id, seq_run_id=seq_id, pass_run_id=pass_id, filter=filter, search=search.strip(),
            limit=PAGE_SIZE, offset=(page - 1) * PAGE_SIZE, upto=upto))
        if computes is not None:
            # the verdicts start computing once the page's rows are read: on 2 cores their read of
            # the runs' chains beside the rows' SQL slowed a first request at 10 M attempts from
            # 0.9 to 1.3 s (docs/performance.md)
            computes.get(seq_ids, wait_s=0.0, con=con)
    computing: frozenset[str] = frozenset()
    if not seq_ids:
        found = {}
    elif known is not None:
        found = known
    elif kept is not None:
        answer = kept.get(seq_ids, wait_s=max(0.0, start + WAIT_VERDICTS_S - time.monotonic()))
        found, computing = answer.verdicts, answer.pending
    else:
        found = verdicts(database, seq_ids)
    n_matching = rows[0]["n_matching"] if rows else 0
    tasks = [TaskRow(cells=[Cell(**c) for c in r["cells"]],
                     **{k: v for k, v in r.items() if k not in ("cells", "n_matching")}) for r in rows]
    return RunPage(run=run, seq_run_id=seq_id, pass_run_id=pass_id, other_partners=others,
                   summaries=summaries, tasks=tasks, filter=filter,
                   search=search.strip(), page=page, n_pages=max(1, -(-n_matching // PAGE_SIZE)),
                   n_matching=n_matching, upto=upto,
                   verdicts=[found[i] for i in seq_ids if i in found],
                   computing=[i for i in seq_ids if i in computing])
