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
import io
import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from seqk import store
from seqk.analysis import metrics
from seqk.analysis.frontier import EqualBudget, equal_budget_reads, oracle_stopped
from seqk.analysis.metrics import Comparison, RunMetrics
from seqk.analysis.study import StudySummary, studies_in
from seqk.errors import NotFound
from seqk.stats import DEFAULT_N_BOOT, DEFAULT_SEED, Estimate
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
    """Filled with compare=True: each seq@k run against its budget partner at equal spend."""
    oracle_runs: list[str] = field(default_factory=list)
    """seq@k runs whose chains stop on the verdict of the judge that grades them."""
    studies: list[StudySummary] = field(default_factory=list)
    """Sequential studies with an arm among the runs: their sequence at each look (seqk.analysis.study)."""


def report(runs: Sequence[str] = (), db: store.DbLike = None, *, compare: bool = False,
           benchmark: str | None = None, model: str | None = None, errors_as_failures: bool = False,
           seed: int = DEFAULT_SEED,
           n_boot: int = DEFAULT_N_BOOT) -> Report:
    """Figures for the runs matching `runs` (ids, globs, prefixes; default all), `benchmark`
    (benchmark or slice) and `model` (actor model)."""
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
        # Every query below starts from task outcomes: grouped once for the runs and the partners
        # their lift (pair_choices) and equal-budget block (budget_partners) read.
        seq_ids = [r["run_id"] for r in chosen if r["metric"] == "seq@k"]
        budget = {p["pass_run_id"] for p in queries.budget_partners(con, run_ids=seq_ids)} if compare else set()
        with store.kept_task_outcomes(con, errors_as_failures=errors_as_failures,
                                      run_ids=sorted(set(ids) | partners | budget)):
            budgets, bootstraps = equal_budget_reads(
                con, seq_ids, errors_as_failures=errors_as_failures, seed=seed,
                n_boot=n_boot) if compare else ([], lambda: None)
            # The equal-budget bootstraps (no database) run while the database computes the
            # curves; each draws from its own seeded stream, so the figures are the same.
            with ThreadPoolExecutor(1) as pool:
                drawn = pool.submit(bootstraps)
                found = metrics.compute(con, ids, errors_as_failures=errors_as_failures, seed=seed,
                                        n_boot=n_boot)
                drawn.result()
            rep = Report(found, errors_as_failures, seed, n_boot, equal_budget=budgets)
            rep.oracle_runs = [r["run_id"] for r in queries.report_runs(
                con, run_ids=ids, benchmark=None, model=None) if oracle_stopped(r)]
            rep.studies = studies_in(con, ids)
            if compare:
                rep.rows = _compare_rows(found)
            elif len(found) == 2:
                a, b = sorted(found, key=lambda r: named.get(r.run_id, len(named)))
                rep.comparison = metrics.compare_on(con, a.run_id, b.run_id, min(a.k, b.k),
                                                    errors_as_failures=errors_as_failures,
                                                    seed=seed, n_boot=n_boot)
    rep.notes = _notes(rep)
    return rep


GRADING_MARK = "†"
"""Marks a run whose feedback mode shows the actor grading information (footnoted)."""


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


def _notes(rep: Report) -> list[str]:
    notes = []
    n_err = sum(r.n_error_attempts for r in rep.runs)
    if n_err:
        runs_with = sum(1 for r in rep.runs if r.n_error_attempts)
        how = ("counted as failures" if rep.errors_as_failures else
               "left out where they hide the outcome (--errors-as-failures counts them as failures)")
        notes.append(f"{n_err} errored attempt(s) in {runs_with} run(s): {how}.")
    for r in rep.runs:
        if r.metric != "seq@k":
            continue
        if r.pass_run_id is None:
            notes.append(f"{r.run_id}: no pass@k run with the same slice, actor model, k, verifier "
                         "and judge, so no lift.")
        elif r.n_pass_candidates > 1:
            notes.append(f"{r.run_id}: compared with {r.pass_run_id}, chosen from "
                         f"{r.n_pass_candidates} pass@k runs (same feedback mode first, then same "
                         "temperature, then run id).")
    for run_id in rep.oracle_runs:
        notes.append(f"{run_id}: its chains stop on the verdict of the LLM judge that also grades "
                     "them, so part of seq@k's gain may be an oracle effect (Huang et al., ICLR 2024).")
    if rep.equal_budget:
        notes.append("at equal budget: the best (width × depth) cell of the seq@k run whose expected "
                     "spend per task is at most pass@m's, against pass@m (its budget partner: same "
                     "slice, actor, verifier and judge, the largest k); difference on shared tasks "
                     f"with a paired task bootstrap ({rep.n_boot} resamples, seed {rep.seed}; a task's "
                     "chains and samples resampled together, the cell held fixed).")
    if any(r.metric == "pass@k" for r in rep.runs):
        notes.append("pass^t (pass@k runs): the unbiased probability that all of t samples succeed, "
                     "C(c, t)/C(n, t), over the tasks counted for pass@t.")
    leaking = sorted({r.feedback_mode for r in rep.runs if r.shows_grading_info})
    if leaking:
        notes.append(f"{GRADING_MARK} feedback mode {', '.join(leaking)} shows grading information to the "
                     "actor: results are not comparable with blind modes.")
    clipped = sorted({r.benchmark for r in rep.runs if r.soft_score_clipped})
    if clipped:
        notes.append(f"soft score of {', '.join(clipped)} runs: each attempt's score is kept unclipped "
                     "(negative points can take it below 0); the mean over tasks is clipped to [0, 1], "
                     "as that benchmark computes it.")
    if rep.rows:
        notes.append("flips: +tasks only seq@K solved / −tasks only pass@K solved; pass@k runs are "
                     "paired by benchmark slice, actor model, k, verifier and judge, whatever "
                     "their feedback mode.")
    notes.append("Intervals: 95% Wilson for metric@t (n = tasks counted at t); for a paired "
                 "difference of 0/1 outcomes (lift, seeded framing), the interval and p of one "
                 "test, so the interval excludes 0 exactly when p < 0.05: Tango's score test "
                 "(Stat Med 1998) with Edwards' continuity correction, McNemar's corrected test "
                 "at 0 (seqk.stats.paired_difference); task-level "
                 f"bootstrap ({rep.n_boot} resamples, seed {rep.seed}) for Δ, EGS, LGS and "
                 "differences of fractional values (framing against Chen's pass@1). pass@t: "
                 "Chen et al.'s unbiased estimator over all samples of tasks with at least t.")
    framings = sorted({r.framing_vs for r in rep.runs if r.framing_vs and r.framing})
    if framings:
        notes.append("framing: seq@1 vs " + " or ".join(framings) + "; a pass@k run's sample 1 "
                     "is used when both runs sample with the same seed (only the framing differs).")
    if any(r.framing_chen for r in rep.runs):
        notes.append("framing vs Chen: seq@1 vs Chen's pass@1 over all of a task's samples; one "
                     "sample's luck is not pass@1, so read both. Its interval resamples tasks: a "
                     "task's samples count once, as their mean.")
    shared = [r.run_id for r in rep.runs if r.shared_seeds]
    if shared:
        notes.append(f"{', '.join(shared)}: seeded by seqk's old rule (every task sampled with seed + "
                     "attempt_index − 1), so a seed's luck is shared across tasks: they are not "
                     "independent and the intervals, which assume they are, are too narrow. A new run "
                     "(under a `tag:`) samples each task with its own seed.")
    return notes


# ---------------------------------------------------------------------------
# Text


def fmt_number(x: float | None, signed: bool = False, digits: int = 2) -> str:
    if x is None:
        return "—"
    if round(x, digits) == 0:
        x = 0.0  # no "-0.00"
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"


def fmt_estimate(e: Estimate | None, *, signed: bool = True, digits: int = 2) -> str:
    """'+0.25 [+0.05, +0.45]' (no interval when it is undefined)."""
    if e is None or e.value is None:
        return "—"
    text = fmt_number(e.value, signed, digits)
    if e.low is not None and e.high is not None:
        text += f" [{fmt_number(e.low, signed, digits)}, {fmt_number(e.high, signed, digits)}]"
    return text


def fmt_point(p: metrics.CurvePoint | None, digits: int = 2) -> str:
    """'0.62 [0.51, 0.72]', with n when some tasks are left out at that t."""
    if p is None or p.value is None:
        return "—"
    text = f"{p.value:.{digits}f} [{p.low:.{digits}f}, {p.high:.{digits}f}]"
    return text + (f" n={p.n_tasks}" if p.n_left_out else "")


def fmt_comparison(c: Comparison | None) -> str:
    """'+0.10 [-0.05, +0.25] p=0.42 n=40'."""
    if c is None or c.difference.value is None:
        return "—"
    p = "" if c.p_value is None else f" p={fmt_p(c.p_value)}"
    return f"{fmt_estimate(c.difference)}{p} n={c.difference.n}"


def fmt_p(p: float, alpha: float = 0.05) -> str:
    """p to two significant digits, or more where two would round it across alpha (0.0496 is
    not shown as 0.05 beside an interval that excludes 0)."""
    for digits in range(2, 17):
        text = f"{p:.{digits}g}"
        if (float(text) < alpha) == (p < alpha):
            return text
    return repr(p)


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
            for name in ("value", "low", "high", "n_tasks", "n_left_out", "first_t_value",
                         "soft_score", "cost_usd_per_task") + (("pass_all_t",) if run.metric == "pass@k" else ()):
                out[f"{prefix}{name}_at_{p.t}"] = getattr(p, name)
        for name in ("delta", "egs", "lgs"):
            e = getattr(run, name)
            if e is not None:
                out |= {f"{prefix}{name}": e.value, f"{prefix}{name}_low": e.low,
                        f"{prefix}{name}_high": e.high, f"{prefix}{name}_n": e.n}
        for name in ("lift", "framing", "framing_chen"):
            c = getattr(run, name)
            if c is not None:
                out |= {f"{prefix}{name}": c.difference.value, f"{prefix}{name}_low": c.difference.low,
                        f"{prefix}{name}_high": c.difference.high, f"{prefix}{name}_n": c.difference.n,
                        f"{prefix}{name}_p": c.p_value, f"{prefix}{name}_a_only": c.n_a_only,
                        f"{prefix}{name}_b_only": c.n_b_only, f"{prefix}{name}_interval": c.interval}
        if run.framing is not None:
            out[f"{prefix}framing_vs"] = run.framing_vs
        if run.spend:
            out |= {f"{prefix}{name}": getattr(run.spend, name) for name in (
                "input_tokens", "cached_tokens", "thinking_tokens", "output_tokens", "cost_usd",
                "n_unpriced_calls")}
        return out

    budgets = {b.seq_run_id: b for b in rep.equal_budget}
    if rep.rows:
        return [{"benchmark": r.benchmark, "actor_model": r.actor_model, "feedback": r.feedback}
                | flat(r.seq, "seq_") | flat(r.pass_run, "pass_")
                | _flat_budget(budgets.get(r.seq.run_id) if r.seq else None) for r in rep.rows]
    return [{"benchmark": r.slice, "actor_model": r.actor_model, "feedback": r.feedback_label}
            | flat(r) for r in rep.runs]


def _flat_budget(b: EqualBudget | None) -> dict[str, Any]:
    if b is None:
        return {}
    out: dict[str, Any] = {"budget_pass_run_id": b.pass_run_id, "budget_unit": b.unit}
    for p in b.points:
        at = f"budget_at_pass_{p.pass_width}"
        out |= {f"{at}_spend": p.budget, f"{at}_pass_value": p.pass_value, f"{at}_width": p.width,
                f"{at}_depth": p.depth, f"{at}_seq_value": p.seq_value, f"{at}_seq_spend": p.seq_spend}
        if p.difference is not None:
            out |= {f"{at}_difference": p.difference.value, f"{at}_low": p.difference.low,
                    f"{at}_high": p.difference.high, f"{at}_n": p.difference.n}
    return out


def equal_budget_lines(b: EqualBudget) -> list[str]:
    """The "at equal budget" block of one seq@k run, as plain text lines."""
    spend = (lambda x: f"${x:.4f}") if b.unit == "US$" else (lambda x: f"{x:,.0f}")
    lines = [f"at equal budget: {b.seq_run_id}",
             f"  vs pass@k (k={b.pass_k}) {b.pass_run_id}",
             f"  {'budget ' + ('$' if b.unit == 'US$' else 'tok'):>11} {'pass@m':<11} {'w×d':<5} "
             f"{'seq':<6} {'seq − pass [95% CI]':<24} n"]
    for p in b.points:
        pas = f"@{p.pass_width} {fmt_number(p.pass_value, digits=3)}"
        if p.width is None or p.difference is None:
            lines.append(f"  {spend(p.budget):>11} {pas:<11} —     (every cell costs more)")
            continue
        lines.append(f"  {spend(p.budget):>11} {pas:<11} {f'{p.width}×{p.depth}':<5} "
                     f"{fmt_number(p.seq_value, digits=3):<6} "
                     f"{fmt_estimate(p.difference, digits=3):<24} {p.difference.n}")
    lines.append(f"  (budget: expected {'US$' if b.unit == 'US$' else 'tokens'} per task of "
                 "pass@m; w×d: chains × attempts,")
    lines.append("   the best seq@k cell costing no more; n: tasks both runs count)")
    return lines


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
