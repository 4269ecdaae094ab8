"""How figures are written as text: numbers, estimates with their intervals, p-values, ranges,
and the equal-budget blocks (seqk.analysis.report's formats and the terminal's both use them)."""

from __future__ import annotations

from typing import Any

from seqk.analysis.frontier import EqualBudget
from seqk.stats import Estimate


def fmt_number(x: float | None, signed: bool = False, digits: int = 2) -> str:
    if x is None:
        return "—"
    if round(x, digits) == 0:
        x = 0.0  # no "-0.00"
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"


def fmt_spend(x: float | None, unit: str | None) -> str:
    """A spend per task: '$0.000191' in US$ (three significant digits), '1,234' in tokens."""
    if x is None:
        return "—"
    return f"${x:.3g}" if unit == "US$" else f"{x:,.0f}"


def fmt_estimate(e: Estimate | None, *, signed: bool = True, digits: int = 2) -> str:
    """'+0.25 [+0.05, +0.45]' (no interval when it is undefined; '(too few tasks)' when a
    bootstrap had too few to give one)."""
    if e is None or e.value is None:
        return "—"
    text = fmt_number(e.value, signed, digits)
    if e.low is not None and e.high is not None:
        text += f" [{fmt_number(e.low, signed, digits)}, {fmt_number(e.high, signed, digits)}]"
    elif e.too_few_tasks:
        text += " (too few tasks)"
    return text


def fmt_p(p: float, alpha: float = 0.05) -> str:
    """p to two significant digits, or more where two would round it across alpha (0.0496 is
    not shown as 0.05 beside an interval that excludes 0)."""
    for digits in range(2, 17):
        text = f"{p:.{digits}g}"
        if (float(text) < alpha) == (p < alpha):
            return text
    return repr(p)


def fmt_range(low: float | None, high: float | None, signed: bool = False, digits: int = 2) -> str:
    """'[0.41, 0.52]': a figure with errored attempts counted as failures, then as successes."""
    if low is None or high is None:
        return "—"
    return f"[{fmt_number(low, signed, digits)}, {fmt_number(high, signed, digits)}]"


def whole_items(head: str, items: list[str], width: int) -> list[str]:
    """`head` then the items joined by " · ", wrapped at `width` without cutting an item."""
    lines = [head]
    for i, item in enumerate(items):
        item += " ·" if i < len(items) - 1 else ""
        if len(lines[-1]) + 1 + len(item) > width:
            lines.append(item)
        else:
            lines[-1] += " " + item
    return lines


def flat_budget(blocks: list[EqualBudget]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for b in blocks:
        head = f"budget_{b.partner}"
        out |= {f"{head}_run_id": b.pass_run_id, f"{head}_unit": b.unit,
                f"{head}_seq_better": ";".join(f"{x:g}" for x in b.seq_better)}
        for i, p in enumerate(b.points, start=1):
            at = f"{head}_{i}"
            out |= {f"{at}_spend": p.budget, f"{at}_n": p.n_tasks, f"{at}_width": p.width,
                    f"{at}_depth": p.depth, f"{at}_seq_value": p.seq_value,
                    f"{at}_seq_spend": p.seq_spend, f"{at}_partner_width": p.partner_width,
                    f"{at}_partner_depth": p.partner_depth, f"{at}_partner_value": p.partner_value,
                    f"{at}_partner_spend": p.partner_spend, f"{at}_p": p.p_value}
            for side, mix in (("seq", p.seq_mix), ("partner", p.partner_mix)):
                if mix is not None:
                    out |= {f"{at}_{side}_mix_width": mix.width, f"{at}_{side}_mix_depth": mix.depth,
                            f"{at}_{side}_mix_share": mix.share}
            if p.difference is not None:
                out |= {f"{at}_difference": p.difference.value, f"{at}_low": p.difference.low,
                        f"{at}_high": p.difference.high}
            if p.band is not None:
                out |= {f"{at}_band_low": p.band.low, f"{at}_band_high": p.band.high}
            if p.if_failures is not None or p.if_successes is not None:
                out |= {f"{at}_if_failures": p.if_failures, f"{at}_if_successes": p.if_successes}
    return out


def shape(width: int | None, depth: int | None, mix: Any = None) -> str:
    """'2×3', or '1×3+2×3' where the frontier mixes a dearer cell in (`mix`: its width and depth)."""
    return f"{width}×{depth}" + (f"+{mix.width}×{mix.depth}" if mix is not None else "")


def equal_budget_lines(b: EqualBudget) -> list[str]:
    """The "at equal budget" block of one seq@k run and one partner, as plain text lines that fit
    80 columns (ids longer than that stand whole on their own line)."""
    from textwrap import wrap

    spend = (lambda x: f"${x:.4g}") if b.unit == "US$" else (lambda x: f"{x:,.0f}")
    unit = "US$" if b.unit == "US$" else "tokens"
    lines = [f"at equal budget: {b.seq_run_id}"]
    lines += ["  " + line for line in wrap(b.title + ":", 76)]
    lines.append(f"  {b.pass_run_id} (k={b.pass_k})")
    if b.unit_reason:  # on a line of its own: a long run id stands whole on the line above
        lines.append(f"  {b.unit_reason}")
    if not b.points:
        seq_cells = [c for c in b.cells if c["series"].startswith("seq@k depth")]
        other_cells = [c for c in b.cells if not c["series"].startswith("seq@k depth")]
        if not b.n_shared or not seq_cells or not other_cells:
            why = "no shared task"
        else:
            # the best cell of one side costs less than the cheapest of the other: no budget has both
            best_seq = max(seq_cells, key=lambda c: (c["value"], -c["spend"]))
            best_other = max(other_cells, key=lambda c: (c["value"], -c["spend"]))
            cheap_seq = min(c["spend"] for c in seq_cells)
            if best_other["spend"] < cheap_seq:
                why = (f"the partner reaches its best, {best_other['value']:.2f}, for "
                       f"{spend(best_other['spend'])}, less than seq@k's cheapest cell costs "
                       f"({spend(cheap_seq)}): seq@k is no better at any budget")
            else:
                why = (f"seq@k reaches its best, {best_seq['value']:.2f}, for {spend(best_seq['spend'])}, "
                       f"less than the partner's cheapest cell costs "
                       f"({spend(min(c['spend'] for c in other_cells))}): no budget holds a cell of both")
        return lines + ["  " + line for line in wrap(why, 76)]
    seqs = [f"{shape(p.width, p.depth, p.seq_mix)} {fmt_number(p.seq_value)}" if p.width else "—"
            for p in b.points]
    partners = [f"{shape(p.partner_width, p.partner_depth, p.partner_mix)} {fmt_number(p.partner_value)}"
                if p.partner_width else "—" for p in b.points]
    budgets = [spend(p.budget) for p in b.points]
    wb, ws, wp = max(8, *map(len, budgets)), max(7, *map(len, seqs)), max(7, *map(len, partners))
    # one n for every budget (the usual case) is said once, below; p is in the JSON and CSV (the
    # interval excludes 0 exactly when p < 0.05): the rows fit 80 columns with mixed cells
    same_n = len({p.n_tasks for p in b.points}) == 1
    lines.append(f"  {'budget ' + ('$' if b.unit == 'US$' else 'tok'):>{wb}} {'seq w×d':<{ws}} {'partner':<{wp}} "
                 f"{'seq − partner [95% CI]':<20} {'95% band':<14}" + ("" if same_n else " n"))
    for p, budget_, seq, partner in zip(b.points, budgets, seqs, partners, strict=True):
        band = fmt_range(p.band.low, p.band.high, signed=True) if p.band else "—"
        lines.append(f"  {budget_:>{wb}} {seq:<{ws}} {partner:<{wp}} {fmt_estimate(p.difference):<20} "
                     f"{band:<14}" + ("" if same_n else f" {p.n_tasks}").rstrip())
    lines = [line.rstrip() for line in lines]
    n_band = sum(1 for p in b.points if p.band is not None)
    verdict = ("seq@k better at " + ", ".join(spend(x) for x in b.seq_better) if b.seq_better
               else "no budget where seq@k is better")
    if b.partner_better:
        verdict += "; the partner better at " + ", ".join(spend(x) for x in b.partner_better)
    verdict += f" (simultaneous 95% band over {n_band} budgets)"
    if b.crossover is not None:
        verdict += f"; the estimates cross at {spend(b.crossover)}"
    lines += ["  " + line for line in wrap("verdict: " + verdict, 76)]
    if any(p.if_failures is not None or p.if_successes is not None for p in b.points):
        lines += ["  " + line for line in whole_items(
            "range: seq − partner if errors were failures / successes, budget by budget:",
            [f"{fmt_number(p.if_failures, True)} / {fmt_number(p.if_successes, True)}" for p in b.points], 76)]
    lines += ["  " + line for line in wrap(
        f"(budget: expected {unit} per task; w×d: chains × attempts of each side's best cell "
        "within it, or a+b: two cells mixed across tasks so that the expected spend is the budget "
        "(the frontier under mixing), taken again in every resample; "
        + (f"n = {b.points[0].n_tasks} tasks at every budget, " if same_n else "n: ")
        + "the tasks every candidate cell of both runs has; no interval where a side's cheapest cell "
        "costs more than the budget in most resamples, or too few tasks)", 76)]
    return lines
