"""`seqk report`: choose runs, compute their figures (seqk.analysis.metrics), lay them out.

`report()` returns data; the renderers here turn it into cells, Markdown, CSV or JSON
text, seqk/render/text.py into the terminal's blocks, and seqk/render/charts.py into charts.
Nothing here prints: the CLI does.

With `compare=True` there is one row per seq@k run (benchmark slice, actor model,
feedback mode) with its pass@k run beside it, plus a row for each pass@k run that no
selected seq@k run is compared with.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import io
import json
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from seqk import store
from seqk.analysis import inputs, metrics
from seqk.analysis.formats import equal_budget_lines, flat_budget, fmt_estimate, fmt_p, fmt_range
from seqk.analysis.frontier import EqualBudget, budget_plans, equal_budget_blocks, oracle_stopped
from seqk.analysis.inputs import RunKeys
from seqk.analysis.memo import REPORT_SOURCES, remembered
from seqk.analysis.metrics import Comparison, RunMetrics, q_values
from seqk.analysis.notes import GRADING_MARK, notes
from seqk.analysis.study import StudySummary, studies_in
from seqk.errors import NotFound
from seqk.stats import DEFAULT_N_BOOT, DEFAULT_SEED
from seqk.store import queries

FORMATS = ("table", "markdown", "csv", "json")


@dataclass
class CompareRow:
    """One (benchmark slice, actor model, feedback mode): seq@k and pass@k side by side."""

    benchmark: str
    actor_model: str
    feedback: str
    seq: RunMetrics | None
    pass_run: RunMetrics | None


@dataclass
class Report:
    """What `seqk report` shows."""

    runs: list[RunMetrics]
    errors_as_failures: bool
    seed: int
    n_boot: int
    rows: list[CompareRow] = field(default_factory=list)
    """Filled with compare=True."""
    comparison: Comparison | None = None
    """The paired comparison when exactly two runs are reported without compare."""
    notes: list[str] = field(default_factory=list)
    equal_budget: list[EqualBudget] = field(default_factory=list)
    """Filled with compare=True: each seq@k run against its partners at equal spend, the
    stopping-matched block first (seqk.analysis.frontier)."""
    oracle_runs: list[str] = field(default_factory=list)
    """seq@k runs whose chains stop on the verdict of the judge that grades them."""
    studies: list[StudySummary] = field(default_factory=list)
    """Sequential studies with an arm among the runs: their sequence at each look (seqk.analysis.study)."""


def report(runs: Sequence[str] = (), db: store.DbLike = None, *, compare: bool = False,
           benchmark: str | None = None, model: str | None = None, errors_as_failures: bool = False,
           seed: int = DEFAULT_SEED,
           n_boot: int = DEFAULT_N_BOOT) -> Report:
    """Figures for the runs matching `runs` (ids, globs, prefixes; default all), `benchmark`
    (benchmark or slice) and `model` (actor model).

    A report asked again over the same rows is read back (seqk.analysis.memo, kind "report"): its
    key is the runs it covers and how they were chosen, the settings, the estimators', store's
    and SQL's code, and each run's `run_fingerprints` row (its runs row and kept chains hashed, the
    viewer's key) and `run_digests` row (its rows in every append-only table it reads), so an
    attempt, call, task, re-judged slot or run event added to any of them computes it again (its
    figures then read from their own memo).
    The studies, q-values and notes are worked out each time."""
    with store.connect(db, read_only=True) as con:
        ids = store.resolve_run_ids(con, runs)
        named = {run_id: i for i, run_id in enumerate(ids)}  # the order the user named them in
        chosen = queries.report_runs(con, run_ids=ids, benchmark=benchmark, model=model)
        ids = [r["run_id"] for r in chosen]
        if not ids:
            raise NotFound("no run matches the filters; `seqk status` lists the runs")
        partners = {p["pass_run_id"] for p in queries.pair_choices(con, run_ids=ids)}
        if compare:
            ids = sorted(set(ids) | partners)
        seq_ids = [r["run_id"] for r in chosen if r["metric"] == "seq@k"]
        plans = budget_plans(con, seq_ids) if compare else []
        every = sorted(set(ids) | partners | {p["pass_run_id"] for p in plans})

        # each run's digests, read once: the report's key and each run's rows' keys
        keyed = functools.cache(lambda: inputs.run_keys(con, every))

        def key() -> tuple[Any, ...]:
            # the pairs too: another pass@k candidate changes a run's n_pass_candidates, not its partner
            return ("report 3", ids, every, seq_ids, plans, queries.pair_choices(con, run_ids=ids),
                    sorted(named.items()), compare, errors_as_failures, seed, n_boot, keyed()[1])

        rep = remembered("report", key, lambda: _computed(
            con, ids, every, seq_ids, plans, named, compare=compare,
            errors_as_failures=errors_as_failures, seed=seed, n_boot=n_boot,
            keys=lambda: keyed()[0]), sources=REPORT_SOURCES)
        rep.studies = studies_in(con, ids)
    _q_values(rep)
    rep.notes = notes(rep)
    return rep


def _computed(con: Any, ids: list[str], every: list[str], seq_ids: list[str], plans: list[dict[str, Any]],
              named: dict[str, int], *, compare: bool, errors_as_failures: bool, seed: int,
              n_boot: int, keys: RunKeys | Callable[[], RunKeys] | None = None) -> Report:
    """`report`'s figures computed: `ids` the runs shown, `every` those and every partner the
    blocks `plans` read, `named` the order the user named runs in; `keys` each run's digests
    (seqk.analysis.inputs.run_keys, or the function giving them), under which each run's rows are
    remembered (read from the store once)."""
    if keys is None:
        keys = functools.cache(lambda: inputs.run_keys(con, every)[0])
    chains = inputs.chains_of(con, every, keys)
    spend = inputs.spend_of(con, every, keys)
    settings = queries.report_runs(con, run_ids=ids, benchmark=None, model=None)
    budgets, blocks = equal_budget_blocks(plans, chains, spend, errors_as_failures=errors_as_failures,
                                          seed=seed, n_boot=n_boot)
    # The equal-budget bootstraps (numpy alone) run while the database computes the
    # curves; each draws from its own seeded stream, so the figures are the same.
    with ThreadPoolExecutor(1) as pool:
        drawn = pool.submit(blocks)
        curves = inputs.curves_of(con, ids, keys, errors_as_failures=errors_as_failures)
        found = metrics.compute(con, ids, errors_as_failures=errors_as_failures, seed=seed,
                                n_boot=n_boot, chains=chains, settings=settings, spend_rows=spend,
                                curve_rows=curves)
        drawn.result()
    rep = Report(found, errors_as_failures, seed, n_boot, equal_budget=budgets)
    rep.oracle_runs = [r["run_id"] for r in settings if oracle_stopped(r)]
    if compare:
        rep.rows = _compare_rows(found)
    elif len(found) == 2:
        a, b = sorted(found, key=lambda r: named.get(r.run_id, len(named)))
        rep.comparison = metrics.compare_on(con, a.run_id, b.run_id, min(a.k, b.k),
                                            errors_as_failures=errors_as_failures,
                                            seed=seed, n_boot=n_boot)
    return rep


def _q_values(rep: Report) -> None:
    """Benjamini-Hochberg q-values across every p-value of the report's table (lifts, framing
    effects: metrics.q_values), set beside each."""
    for run, qs in zip(rep.runs, q_values(rep.runs), strict=True):
        for name, value in qs.items():
            setattr(run, name, dataclasses.replace(getattr(run, name), q_value=value))
    if rep.comparison is not None and rep.comparison.p_value is not None:
        rep.comparison = dataclasses.replace(rep.comparison, q_value=rep.comparison.p_value)


def marked(text: str, run: RunMetrics) -> str:
    """text, with the grading-information mark when the run's feedback mode shows it."""
    return f"{text} {GRADING_MARK}" if run.shows_grading_info else text


def _compare_rows(found: list[RunMetrics]) -> list[CompareRow]:
    by_id = {r.run_id: r for r in found}
    rows = [CompareRow(r.slice, r.actor_model, marked(r.feedback_label, r), r,
                       by_id.get(r.pass_run_id) if r.pass_run_id else None)
            for r in found if r.metric == "seq@k"]
    paired = {r.pass_run.run_id for r in rows if r.pass_run}
    rows += [CompareRow(r.slice, r.actor_model, marked(f"{r.feedback_label} (pass@k only)", r), None, r)
             for r in found if r.metric == "pass@k" and r.run_id not in paired]
    return sorted(rows, key=lambda r: (r.benchmark, r.actor_model, r.feedback))


# ---------------------------------------------------------------------------
# Text


def fmt_point(p: metrics.CurvePoint | None, digits: int = 2) -> str:
    """'0.62 [0.51, 0.72]' (a bootstrap interval where chains are censored), with n when some
    tasks are left out at that t."""
    if p is None or p.value is None:
        return "—"
    if p.low is not None and p.high is not None:
        text = f"{p.value:.{digits}f} [{p.low:.{digits}f}, {p.high:.{digits}f}]"
    else:
        text = f"{p.value:.{digits}f}" + (" (too few tasks)" if p.too_few_tasks else "")
    return text + (f" n={p.n_tasks}" if p.n_left_out else "")


def fmt_comparison(c: Comparison | None, *, with_range: bool = True) -> str:
    """'+0.10 [-0.05, +0.25] p=0.42 q=0.61 n=40', and the range errors leave when more than 1% of
    the compared slots are errors ('errors→failures/successes [-0.03, +0.12]')."""
    if c is None or c.difference.value is None:
        return "—"
    p = "" if c.p_value is None else f" p={fmt_p(c.p_value)}"
    q = "" if c.q_value is None else f" q={fmt_p(c.q_value)}"
    text = f"{fmt_estimate(c.difference)}{p}{q} n={c.difference.n}"
    if with_range and c.shows_range:
        text += f" errors→failures/successes {fmt_range(c.if_failures, c.if_successes, signed=True)}"
    return text


def fmt_cost(run: RunMetrics | None) -> str:
    """'$1.2345', 'unknown', or '≥$1.2 (3 unpriced calls)'."""
    if run is None or run.spend is None:
        return "—"
    s = run.spend
    if s.cost_usd is None:
        return "unknown" if s.n_calls else "—"
    text = f"${s.cost_usd:.4f}"
    return f"≥{text} ({s.n_unpriced_calls} unpriced calls)" if s.n_unpriced_calls else text


def _points(run: RunMetrics | None, t: int) -> metrics.CurvePoint | None:
    if run is None or t > len(run.curve):
        return None
    return run.curve[t - 1]


def cells(rep: Report) -> tuple[list[str], list[list[str]]]:
    """The table every text format shows: (column names, rows of cell strings)."""
    runs = [r for row in rep.rows for r in (row.seq, row.pass_run) if r] if rep.rows else rep.runs
    k_max = max((r.k for r in runs), default=0)
    at = [f"@{t}" for t in range(1, k_max + 1)]
    if rep.rows:
        columns = ["benchmark", "model", "feedback", "n", *at, "Δseq", "lift (p)",
                   "framing", "flips +/−", "cost seq / pass"]
        body = []
        for row in rep.rows:
            lead = row.seq or row.pass_run
            assert lead is not None
            curve = [
                "\n".join(f"{name} {fmt_point(_points(run, t))}"
                          for name, run in (("seq", row.seq), ("pass", row.pass_run)) if run)
                for t in range(1, k_max + 1)]
            lift = row.seq.lift if row.seq else None
            flips = f"+{lift.n_a_only}/−{lift.n_b_only}" if lift else "—"
            body.append([row.benchmark, row.actor_model, row.feedback, str(lead.n_started),
                         *curve, fmt_estimate(row.seq.delta) if row.seq else "—",
                         fmt_comparison(lift),
                         fmt_comparison(row.seq.framing if row.seq else None), flips,
                         f"{fmt_cost(row.seq)} / {fmt_cost(row.pass_run)}"])
        return columns, body
    columns = ["run", "metric", "K", "n", "errors", *at, "Δ", "EGS", "LGS", "lift (p)", "cost"]
    body = [[marked(r.run_id, r), r.metric, str(r.k), str(r.n_started), str(r.n_error_attempts),
             *(fmt_point(_points(r, t)) for t in range(1, k_max + 1)),
             fmt_estimate(r.delta), fmt_estimate(r.egs, signed=False),
             fmt_estimate(r.lgs, signed=False), fmt_comparison(r.lift), fmt_cost(r)]
            for r in rep.runs]
    return columns, body


def comparison_line(c: Comparison) -> str:
    """One sentence for a paired comparison of two runs."""
    return (f"paired at t={c.t} on {c.difference.n} shared tasks, the first run minus the second: "
            f"{c.a_run_id} − {c.b_run_id} = {fmt_comparison(c)}; {c.n_a_only} solved only by the "
            f"first, {c.n_b_only} only by the second")


def to_markdown(rep: Report) -> str:
    """A GitHub Markdown table plus the notes."""
    columns, body = cells(rep)
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(c.replace("\n", "<br>").replace("|", "\\|") for c in row) + " |"
              for row in body]
    if rep.comparison:
        lines += ["", comparison_line(rep.comparison)]
    for b in rep.equal_budget:
        lines += ["", "```", *equal_budget_lines(b), "```"]
    return "\n".join(lines + [""] + [f"- {n}" for n in rep.notes]) + "\n"


def flat_rows(rep: Report) -> list[dict[str, Any]]:
    """One flat dict per run (or per compare row, fields prefixed seq_ / pass_): numbers, not text."""

    def flat(run: RunMetrics | None, prefix: str = "") -> dict[str, Any]:
        if run is None:
            return {}
        out: dict[str, Any] = {f"{prefix}run_id": run.run_id, f"{prefix}metric": run.metric,
                               f"{prefix}k": run.k, f"{prefix}n_started": run.n_started,
                               f"{prefix}n_error_attempts": run.n_error_attempts,
                               f"{prefix}shows_grading_info": run.shows_grading_info,
                               f"{prefix}soft_score_clipped": run.soft_score_clipped}
        for p in run.curve:
            for name in ("value", "low", "high", "n_tasks", "n_left_out", "n_censored", "first_t_value",
                         "soft_score", "cost_usd_per_task", "value_if_failures", "value_if_successes"
                         ) + (("pass_all_t",) if run.metric == "pass@k" else ()):
                out[f"{prefix}{name}_at_{p.t}"] = getattr(p, name)
        for name in ("delta", "egs", "lgs"):
            e = getattr(run, name)
            if e is not None:
                out |= {f"{prefix}{name}": e.value, f"{prefix}{name}_low": e.low,
                        f"{prefix}{name}_high": e.high, f"{prefix}{name}_n": e.n,
                        f"{prefix}{name}_too_few_tasks": e.too_few_tasks}
            if name in run.gains_if_errors:
                out |= {f"{prefix}{name}_if_failures": run.gains_if_errors[name][0],
                        f"{prefix}{name}_if_successes": run.gains_if_errors[name][1]}
        for name in ("lift", "framing", "framing_chen"):
            c = getattr(run, name)
            if c is not None:
                out |= {f"{prefix}{name}": c.difference.value, f"{prefix}{name}_low": c.difference.low,
                        f"{prefix}{name}_high": c.difference.high, f"{prefix}{name}_n": c.difference.n,
                        f"{prefix}{name}_p": c.p_value, f"{prefix}{name}_q": c.q_value,
                        f"{prefix}{name}_detectable": c.detectable,
                        f"{prefix}{name}_if_failures": c.if_failures,
                        f"{prefix}{name}_if_successes": c.if_successes,
                        f"{prefix}{name}_a_only": c.n_a_only,
                        f"{prefix}{name}_b_only": c.n_b_only, f"{prefix}{name}_interval": c.interval}
        if run.framing is not None:
            out[f"{prefix}framing_vs"] = run.framing_vs
        if run.spend:
            out |= {f"{prefix}{name}": getattr(run.spend, name) for name in (
                "input_tokens", "cached_tokens", "thinking_tokens", "output_tokens", "cost_usd",
                "n_unpriced_calls")}
        return out

    budgets: dict[str, list[EqualBudget]] = {}
    for b in rep.equal_budget:
        budgets.setdefault(b.seq_run_id, []).append(b)
    if rep.rows:
        return [{"benchmark": r.benchmark, "actor_model": r.actor_model, "feedback": r.feedback}
                | flat(r.seq, "seq_") | flat(r.pass_run, "pass_")
                | flat_budget(budgets.get(r.seq.run_id, []) if r.seq else []) for r in rep.rows]
    return [{"benchmark": r.slice, "actor_model": r.actor_model, "feedback": r.feedback_label}
            | flat(r) for r in rep.runs]


def to_csv(rep: Report) -> str:
    """flat_rows as CSV; the header is the union of every row's fields."""
    rows = flat_rows(rep)
    header: dict[str, None] = {}
    for row in rows:
        header |= dict.fromkeys(row)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(header), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def to_json(rep: Report) -> str:
    """The whole report (every run's curve, estimates, spend by role; rows; notes) as JSON."""
    return json.dumps(dataclasses.asdict(rep), indent=2, default=str)
