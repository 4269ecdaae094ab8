"""`seqk report` as text blocks that read in an 80-column terminal.

A table with a column per t and per figure needs ~200 columns, and a terminal narrower than
that cuts its cells to `…`. Here each run (or each compare row) is a block: a heading line
with its ids, one line per t, one line per figure. No line depends on the terminal's width
and nothing is ever cut: a name longer than the terminal wraps, whole.
"""

from __future__ import annotations

from typing import Any

from seqk.analysis import metrics
from seqk.analysis.formats import equal_budget_lines, fmt_estimate, fmt_number, fmt_range, whole_items
from seqk.analysis.metrics import Comparison, RunMetrics
from seqk.analysis.report import (
    CompareRow,
    Report,
    comparison_line,
    fmt_comparison,
    fmt_cost,
    fmt_point,
    marked,
)
from seqk.render.study import report_lines

_LABEL = 9
"""Width of a figure's label ("framing  "): values line up under each other."""


def to_text(rep: Report) -> str:
    """The whole report: one block per compare row (or per run), then the paired comparison
    and the notes."""
    blocks = [_compare_block(row) for row in rep.rows] if rep.rows else [
        _run_block(run) for run in rep.runs]
    text = "\n\n".join(blocks)
    for budget in rep.equal_budget:
        text += "\n\n" + "\n".join(equal_budget_lines(budget))
    if rep.comparison:
        text += "\n\n" + comparison_line(rep.comparison)
    if rep.studies:
        text += "\n\n" + "\n".join(report_lines(rep.studies))
    return text + "\n\n" + "\n".join(f"• {note}" for note in rep.notes) + "\n"


def _figure(label: str, value: str) -> str:
    return f"  {label:<{_LABEL}}{value}"


def _cache_share(run: RunMetrics) -> list[str]:
    """'  cache: 12% of 4,321 input tokens served from it' (cache reads over every input token of
    the run's calls), or no line when no call reported input."""
    s = run.spend
    if s is None or not s.input_tokens:
        return []
    return [f"  cache: {s.cached_tokens / s.input_tokens:.0%} of {s.input_tokens:,} input tokens served from it"]


def _run_block(run: RunMetrics) -> str:
    name = "seq@t" if run.metric == "seq@k" else "pass@t"
    lines = [run.run_id,
             f"  {run.metric} · K={run.k} · {run.actor_model} · {marked(run.feedback_label, run)}",
             f"  {run.n_started} task(s) · {run.n_error_attempts} errored attempt(s) · "
             f"cost {fmt_cost(run)}", *_cache_share(run),
             f"  {'t':>3}  {name}" + ("   pass^t" if run.metric == "pass@k" else "")]
    if run.rejudge_label:
        lines.insert(1, f"  {run.rejudge_label}")
    lines += [f"  {p.t:>3}  {fmt_point(p)}" + (f"   {fmt_number(p.pass_all_t, digits=3)}"
                                              if run.metric == "pass@k" else "")
              for p in run.curve]
    lines += _range_lines(name, run)
    if run.delta is not None:
        lines.append(_figure(f"Δseq@{run.k}", fmt_estimate(run.delta)))
        lines.append(_figure("EGS", f"{fmt_estimate(run.egs, signed=False)} · LGS "
                                    f"{fmt_estimate(run.lgs, signed=False)}"))
        lines += _gains_range(run)
    lines += _paired_lines(run, name_partner=True)
    return "\n".join(lines)


def _compare_block(row: CompareRow) -> str:
    lines = [f"{row.benchmark} · {row.actor_model} · {row.feedback}"]
    for name, run in (("seq", row.seq), ("pass", row.pass_run)):
        if run is not None:
            lines.append(f"  {name:<5}{run.run_id}")
            if run.rejudge_label:
                lines.append(f"  {'':<5}{run.rejudge_label}")
            lines.append(f"  {'':<5}{run.n_started} task(s) · {run.n_error_attempts} errored "
                         f"attempt(s) · cost {fmt_cost(run)}")
    curves = [(name, run) for name, run in (("seq@t", row.seq), ("pass@t", row.pass_run)) if run]
    points = [{p.t: fmt_point(p) for p in run.curve} for _, run in curves]
    width = max((len(text) for column in points for text in column.values()), default=0)
    width = max(width, *(len(name) for name, _ in curves))
    lines.append(f"  {'t':>3}  " + "   ".join(f"{name:<{width}}" for name, _ in curves).rstrip())
    k_max = max(run.k for _, run in curves)
    for t in range(1, k_max + 1):
        lines.append(f"  {t:>3}  " + "   ".join(
            f"{column.get(t, '—'):<{width}}" for column in points).rstrip())
    lines += _spend_lines(curves)
    if row.pass_run is not None:
        lines.append(_figure("pass^t", " · ".join(fmt_number(p.pass_all_t, digits=3)
                                                   for p in row.pass_run.curve)
                            + f" (t = 1..{row.pass_run.k})"))
    for name, run in curves:
        lines += _range_lines(name, run)
    if row.seq is not None:
        if row.seq.delta is not None:
            lines.append(_figure(f"Δseq@{row.seq.k}", fmt_estimate(row.seq.delta)))
            lines += _gains_range(row.seq, egs=False)
        lines += _paired_lines(row.seq, name_partner=False)
    return "\n".join(lines)


def _spend_lines(curves: list[tuple[str, RunMetrics]]) -> list[str]:
    """What a task cost up to each t, per run: US$ when every point of every run is priced and
    not free, else tokens (input + output), so that the two read at the same unit."""
    points = [p for _, run in curves for p in run.curve]
    dollars = bool(points) and all(p.cost_usd_per_task for p in points)
    label, fmt = ("$/task", lambda p: f"{p.cost_usd_per_task:.4f}") if dollars else (
        "tok/task", lambda p: "—" if p.tokens_per_task is None else f"{p.tokens_per_task:,.0f}")
    lines = []
    for i, (name, run) in enumerate(curves):
        values = " · ".join(fmt(p) for p in run.curve)
        lines.append(_figure(label if i == 0 else "", f"{name.split('@')[0]:<5}{values} (t = 1..{run.k})"))
    return lines


def _range_lines(name: str, run: RunMetrics) -> list[str]:
    """The range errors leave on each point of a run with errored attempts: every errored attempt
    counted as a failure, then as a success."""
    if not run.n_error_attempts or not run.curve:
        return []
    lines = [f"{name} if errors were failures / successes, t = 1..{run.k}:"]
    for i, p in enumerate(run.curve):  # each range whole on a line
        item = fmt_range(p.value_if_failures, p.value_if_successes) + (" ·" if i < len(run.curve) - 1 else "")
        if len(lines[-1]) + 1 + len(item) > 80 - 2 - _LABEL:
            lines.append(item)
        else:
            lines[-1] += " " + item
    return [_figure("range" if i == 0 else "", line) for i, line in enumerate(lines)]


def _gains_range(run: RunMetrics, *, egs: bool = True) -> list[str]:
    """ΔSeq@K (and EGS, LGS) with errored attempts counted as failures / as successes."""
    if not run.gains_if_errors:
        return []
    shown = [("Δ", "delta", True)] + ([("EGS", "egs", False), ("LGS", "lgs", False)] if egs else [])
    items = [f"{label} {fmt_number(run.gains_if_errors[key][0], signed)} / "
             f"{fmt_number(run.gains_if_errors[key][1], signed)}" for label, key, signed in shown]
    return [_figure("", line) for line in whole_items("errors as failures / successes:", items, 80 - 2 - _LABEL)]


def _error_range(c: Comparison) -> list[str]:
    """The range errors leave on a comparison whose compared slots are more than 1% errors."""
    if not c.shows_range:
        return []
    return [_figure("", f"errors as failures / successes: "
                        f"{fmt_range(c.if_failures, c.if_successes, signed=True)} "
                        f"({c.error_share:.0%} of the slots)")]


def _power_line(c: Comparison) -> list[str]:
    """The smallest difference the comparison's n detects (28.3: underpowered runs say so)."""
    if c.difference.value is None:
        return []
    if c.detectable is None:  # even a difference as large as their disagreement would be missed
        return [_figure("", f"{c.difference.n} tasks detect nothing: too few disagree (80% power, "
                            "α 0.05; plan)")]
    return [_figure("", f"{c.difference.n} tasks detect {c.detectable:.2f} with 80% power (α 0.05; plan)")]


def _paired_lines(run: RunMetrics, *, name_partner: bool) -> list[str]:
    """The lift with its flips (and the pass@k run, unless the block names it already), and
    the framing effect with what seq@1 was compared with."""
    lift: Comparison | None = run.lift
    if lift is None:
        return []
    lines = [_figure("lift", f"{fmt_comparison(lift, with_range=False)} · flips "
                             f"+{lift.n_a_only}/−{lift.n_b_only}")]
    lines += _error_range(lift) + _power_line(lift)
    if name_partner:
        lines.append(_figure("", f"vs {lift.b_run_id}"))
    if run.framing is not None:
        lines.append(_figure("framing", fmt_comparison(run.framing, with_range=False)))
        lines += _error_range(run.framing) + _power_line(run.framing)
        lines.append(_figure("", f"seq@1 vs {run.framing_vs}"))
    if run.framing_chen is not None:
        lines.append(_figure("vs Chen", fmt_comparison(run.framing_chen, with_range=False)))
        lines += _error_range(run.framing_chen) + _power_line(run.framing_chen)
        lines.append(_figure("", "seq@1 vs pass@1 (Chen mean over all samples)"))
    return lines


def closing_summary(run_id: str, db: Any) -> str:
    """A few lines (rich markup) for the end of `seqk run`: metric@1..K on success with n tasks
    and 95% intervals, ΔSeq@K / EGS / LGS for seq@k, lift when a pass@k run exists,
    the errors excluded, and the spend."""
    run = metrics.run_metrics(run_id, db)
    return describe_run(run) if run is not None else f"no run {run_id} in the database"


def describe_run(run: RunMetrics) -> str:
    """A run's figures as a few lines of text with rich markup (closing_summary)."""
    from rich.markup import escape

    name = "seq" if run.metric == "seq@k" else "pass"
    lines = [f"[bold]{escape(run.run_id)}[/]: {run.metric}, K={run.k}, success on "
             f"{run.n_started} task(s)"]
    if run.rejudge_label:
        lines.append(f"  {escape(run.rejudge_label)}")
    lines.append(f"  {'t':>3}  {name + '@t':>7}  {'95% interval':<16} {'n':>5} {'left out':>8}  "
                 f"{'first-t':>7}  {'soft score':>10}  {'$/task':>8}")
    for p in run.curve:
        wilson = "—" if p.low is None else f"[{p.low:.3f}, {p.high:.3f}]"
        cost = "—" if p.cost_usd_per_task is None else f"{p.cost_usd_per_task:.4f}"
        lines.append(f"  {p.t:>3}  {fmt_number(p.value, digits=3):>7}  {wilson:<16} {p.n_tasks:>5} "
                     f"{p.n_left_out:>8}  {fmt_number(p.first_t_value, digits=3):>7}  "
                     f"{fmt_number(p.soft_score, digits=3):>10}  {cost:>8}")
    soft = ("mean of the tasks' best unclipped scores, clipped to [0, 1] after averaging "
            "(HealthBench's rule)" if run.soft_score_clipped else "mean best score")
    if run.metric == "pass@k":
        lines.append("  pass@t: Chen et al.'s unbiased estimator over all samples; first-t: "
                     f"solved within the first t samples (seq_k); soft score: {soft}.")
    elif run.soft_score_clipped:
        lines.append(f"  soft score: {soft}.")
    if run.delta is not None:
        lines.append(f"  ΔSeq@{run.k} {fmt_estimate(run.delta, digits=3)} · EGS "
                     f"{fmt_estimate(run.egs, signed=False)} · LGS "
                     f"{fmt_estimate(run.lgs, signed=False)} (n={run.delta.n}, task bootstrap)")
    if run.lift is not None:
        lines.append(f"  lift seq@{run.k} − pass@{run.k} vs {escape(run.lift.b_run_id)}: "
                     f"{escape(fmt_comparison(run.lift))}")
        lines.append(f"  framing: seq@1 vs {escape(run.framing_vs or '')}: "
                     f"{escape(fmt_comparison(run.framing))}")
        if run.framing_chen is not None:
            lines.append(f"  framing: seq@1 vs pass@1 (Chen mean over all samples): "
                         f"{escape(fmt_comparison(run.framing_chen))}")
    if run.n_error_attempts:
        lines.append(f"  [yellow]{run.n_error_attempts} errored attempt(s)[/] censor their chains "
                     "(Kaplan-Meier over attempts; `seqk report --errors-as-failures` counts them as "
                     "failures); range with them as failures / successes: " + " · ".join(
                         fmt_range(p.value_if_failures, p.value_if_successes, digits=3)
                         for p in run.curve))
    if run.spend is not None:
        s = run.spend
        lines.append(f"  spend: {s.input_tokens:,} in ({s.cached_tokens:,} cached) / "
                     f"{s.thinking_tokens:,} thinking / {s.output_tokens:,} out tokens · "
                     f"{escape(fmt_cost(run))}")
    return "\n".join(lines)
