"""`seqk report --compare --by model|feedback|critic|judge`: every pair of runs of a slice that
differ along one axis, paired on their shared tasks, with Benjamini–Hochberg q-values across the
whole table, and a ranking with bootstrap rank intervals where more than two runs compete.

A group is the runs that share everything the axis does not vary (its `shares`); within a group,
each pair of runs with different values on the axis is compared at the smaller of their K
(`metrics.compare_on`: the interval and p of `seqk compare`). Other settings the pair differs in
(temperature, k, a tag) are listed beside it, so a confound is never hidden.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from seqk import store
from seqk.analysis import metrics
from seqk.analysis.compare import differs
from seqk.analysis.metrics import Comparison
from seqk.analysis.ranking import rank_intervals
from seqk.errors import BadInput, NotFound
from seqk.stats import DEFAULT_N_BOOT, DEFAULT_SEED, Types, benjamini_hochberg
from seqk.store import queries


def _feedback(run: dict[str, Any]) -> str:
    return f"{run['feedback_mode']} ({run['critic_model']})" if run["critic_model"] else run["feedback_mode"]


@dataclass(frozen=True)
class Axis:
    """What `--by` varies, and what the runs of one group share."""

    value: Callable[[dict[str, Any]], str | None]
    """A run's value on the axis (None: the run has none and is left out, e.g. no critic)."""
    shares: tuple[str, ...]
    """The run settings every run of a group has in common."""
    changes: tuple[str, ...]
    """The settings (as `seqk compare` names them; a name ending in '.' is every setting of that role)
    the axis varies: not listed as confounds."""
    seq_only: bool = False


AXES: dict[str, Axis] = {
    "model": Axis(lambda r: r["actor_model"], ("benchmark", "slice", "metric", "feedback_mode", "verifier"),
                  ("actor.model", "actor.price", "judge.", "critic.")),
    "feedback": Axis(_feedback, ("benchmark", "slice", "metric", "actor_model", "verifier", "judge_model"),
                     ("feedback_mode", "critic."), seq_only=True),
    "critic": Axis(lambda r: r["critic_model"],
                   ("benchmark", "slice", "metric", "actor_model", "feedback_mode", "verifier", "judge_model"),
                   ("critic.",), seq_only=True),
    "judge": Axis(lambda r: r["judge_model"] or r["verifier"],
                  ("benchmark", "slice", "metric", "actor_model", "feedback_mode"),
                  ("judge.", "verifier")),
}
"""The axes of `--by`. A judge defaults to the actor and a critic to the judge, so comparing models
compares their default judges and critics too: those are part of the model axis."""


@dataclass(frozen=True)
class Member:
    """A run of a group, by its value on the axis."""

    run_id: str
    label: str
    k: int


@dataclass(frozen=True)
class Pair:
    """Run a against run b of one group, a − b at the smaller K."""

    a: Member
    b: Member
    comparison: Comparison
    q_value: float | None
    """Benjamini–Hochberg adjusted p-value over every pair of the table (None without a p-value)."""
    also_differs: list[str]
    """Settings the two runs differ in besides the axis (temperature, k, a tag, ...)."""


@dataclass(frozen=True)
class Ranked:
    """A run's place among its group's runs."""

    member: Member
    value: float
    rank: int
    low: int
    high: int


@dataclass
class Group:
    """The runs of one slice that share everything but the axis."""

    shares: dict[str, Any]
    members: list[Member]
    pairs: list[Pair] = field(default_factory=list)
    ranking_t: int | None = None
    """The t the ranking is at (the smallest K of the group), when more than two runs compete."""
    ranking: list[Ranked] = field(default_factory=list)
    n_ranked: int = 0
    """Tasks every run of the group counts at ranking_t."""


@dataclass
class GroupedComparison:
    """`report --compare --by <axis>`."""

    by: str
    groups: list[Group]
    errors_as_failures: bool
    seed: int
    n_boot: int
    notes: list[str] = field(default_factory=list)

    @property
    def pairs(self) -> list[Pair]:
        """Every pair of the table, group by group."""
        return [p for g in self.groups for p in g.pairs]


def compare_by(runs: Sequence[str] = (), db: store.DbLike = None, *, by: str, benchmark: str | None = None,
               model: str | None = None, errors_as_failures: bool = False, seed: int = DEFAULT_SEED,
               n_boot: int = DEFAULT_N_BOOT) -> GroupedComparison:
    """Every pair of the chosen runs (ids, globs, prefixes; default all) that differ along `by`
    within a group, with q-values across the table and rankings."""
    if by not in AXES:
        raise BadInput(f"--by {by!r}: compare by one of {', '.join(AXES)}")
    axis = AXES[by]
    with store.connect(db, read_only=True) as con:
        ids = store.resolve_run_ids(con, runs)
        chosen = [r for r in queries.report_runs(con, run_ids=ids, benchmark=benchmark, model=model)
                  if axis.value(r) is not None and not (axis.seq_only and r["metric"] != "seq@k")]
        if not chosen:
            raise NotFound(f"no run matches the filters with a {by} to compare; `seqk status` lists the runs")
        grouped: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        for r in chosen:
            shared = {**r, "feedback_mode": None} if r["metric"] == "pass@k" else r
            grouped.setdefault(tuple(shared[key] for key in axis.shares), []).append(r)
        groups = [Group(dict(zip(axis.shares, key, strict=True)),
                        sorted((Member(r["run_id"], str(axis.value(r)), r["k"]) for r in rs),
                               key=lambda m: (m.label, m.run_id)))
                  for key, rs in sorted(grouped.items(), key=lambda item: str(item[0])) if len(rs) > 1]
        rows = {m.run_id: store.get_run(con, m.run_id) or {} for g in groups for m in g.members}
        for group in groups:
            _compare_group(con, group, axis, rows, errors_as_failures, seed, n_boot)
    result = GroupedComparison(by, [g for g in groups if g.pairs], errors_as_failures, seed, n_boot)
    q_values = benjamini_hochberg([p.comparison.p_value for p in result.pairs])
    q_of = dict(zip(map(id, result.pairs), q_values, strict=True))
    for group in result.groups:
        group.pairs = [dataclasses.replace(p, q_value=q_of[id(p)]) for p in group.pairs]
    result.notes = _notes(result)
    return result


def _compare_group(con: Any, group: Group, axis: Axis, rows: dict[str, dict[str, Any]], errors_as_failures: bool,
                   seed: int, n_boot: int) -> None:
    for a, b in combinations(group.members, 2):
        if a.label == b.label:
            continue
        t = min(a.k, b.k)
        comparison = metrics.compare_on(con, a.run_id, b.run_id, t, errors_as_failures=errors_as_failures,
                                        seed=seed, n_boot=n_boot)
        also = [key for key in differs(rows[a.run_id], rows[b.run_id])
                if not any(key == c or (c.endswith(".") and key.startswith(c)) for c in axis.changes)]
        group.pairs.append(Pair(a, b, comparison, None, also))
    if len(group.members) <= 2:
        return
    group.ranking_t = t = min(m.k for m in group.members)
    values: dict[tuple[int, str], dict[str, float]] = {}
    for run_id, task_index, content, value in queries.task_values_at(
            con, errors_as_failures=errors_as_failures, run_ids=[m.run_id for m in group.members], t=t):
        values.setdefault((task_index, content), {})[run_id] = value
    order = [m.run_id for m in group.members]
    complete = [[task[i] for i in order] + [1] for task in values.values() if len(task) == len(order)]
    types = Types.from_rows(complete)
    group.n_ranked = types.n
    ranks = rank_intervals(types, name=f"rank:{t}:" + ":".join(order), seed=seed, n_boot=n_boot)
    group.ranking = [Ranked(group.members[r.column], r.value, r.rank, r.low, r.high) for r in ranks]


def _notes(result: GroupedComparison) -> list[str]:
    tested = sum(1 for p in result.pairs if p.comparison.p_value is not None)
    notes = [f"Each pair: a − b at the smaller K of the two, on the tasks both count there; the interval and "
             "p of `seqk compare` (Tango's score test for 0/1 values, a paired task bootstrap for fractional "
             f"ones, p read from its resamples). q: Benjamini–Hochberg over the {tested} pair(s) of this table "
             "that have a p-value; a pair is a finding at a 5% false discovery rate when q < 0.05."]
    if any(g.ranking for g in result.groups):
        notes.append(f"Ranking: 1 + the runs with a higher mean on the tasks all of the group count; its interval "
                     f"holds the middle 95% of the ranks over {result.n_boot} task resamples (seed {result.seed}).")
    if not result.groups:
        notes.append(f"No two runs of one slice differ along {result.by} with everything else shared.")
    if any(p.also_differs for p in result.pairs):
        notes.append("also: settings the two runs differ in besides the axis, so part of the difference may be "
                     "theirs.")
    return notes


def flat_rows(result: GroupedComparison) -> list[dict[str, Any]]:
    """One flat dict per pair: the group's shared settings, both runs, the figures."""
    out = []
    for group in result.groups:
        for p in group.pairs:
            c = p.comparison
            out.append(group.shares | {
                "by": result.by, "a_run_id": p.a.run_id, "b_run_id": p.b.run_id, "a": p.a.label, "b": p.b.label,
                "t": c.t, "a_value": c.a_value, "b_value": c.b_value, "difference": c.difference.value,
                "low": c.difference.low, "high": c.difference.high, "n": c.difference.n, "p_value": c.p_value,
                "q_value": p.q_value, "interval": c.interval, "also_differs": ";".join(p.also_differs)})
    return out


def to_csv(result: GroupedComparison) -> str:
    """flat_rows as CSV."""
    rows = flat_rows(result)
    buffer = io.StringIO()
    if rows:
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return buffer.getvalue()


def to_json(result: GroupedComparison) -> str:
    """The whole table: groups, their pairs with q-values, rankings, notes."""
    return json.dumps(dataclasses.asdict(result), indent=2, default=str)
