"""`seqk compare A B` as text that reads in an 80-column terminal: the two runs, what differs
between them, the paired difference at each t, the spend per task, the flips, the notes. Run ids
and commands are printed whole (a terminal wraps them), never cut."""

from __future__ import annotations

import json
from typing import Any

from seqk.analysis.compare import RunComparison, Side, inspect_command, view_path
from seqk.analysis.compare_budget import BudgetComparison, summary
from seqk.analysis.formats import fmt_estimate, fmt_number, fmt_p, fmt_spend, whole_items
from seqk.analysis.grouped import Group, GroupedComparison

MAX_FLIPS = 20
"""Flips listed per side unless asked for more (`--max-flips`); JSON lists every one."""


def to_text(c: RunComparison, *, db: str | None = None, max_flips: int | None = MAX_FLIPS,
            names: tuple[str, str] | None = None) -> str:
    """The whole comparison. The printed `seqk inspect` commands name each run as `names` has it
    (what the user typed, which named one run each; default the run ids) and carry `db`."""
    head = [f"compare: {c.a.run.slice} · {c.n_shared} task(s) both runs hold", *_side("a", c.a), *_side("b", c.b)]
    blocks = ["\n".join(lines) for lines in (head, _differs(c), _at_t(c), _spend(c), equal_budget_lines(c.equal_budget),
                                             _flips(c, db, max_flips, names))]
    return "\n\n".join(blocks) + "\n\n" + "\n".join(f"• {note}" for note in c.notes) + "\n"


def _side(name: str, side: Side) -> list[str]:
    r = side.run
    chains = f" · {side.chains} chains" if side.chains > 1 else ""
    feedback = f" · {r.feedback_label}" if r.metric == "seq@k" else ""
    return [f"  {name}  {r.run_id}",
            f"     {r.metric} · K={r.k}{chains} · {r.actor_model}{feedback} · {r.n_started} task(s), "
            f"{r.n_error_attempts} errored attempt(s)"]


def _value(value: Any) -> str:
    if isinstance(value, dict):  # a price: the rates it sets
        return "{" + ", ".join(f"{k}: {_value(v)}" for k, v in value.items() if v is not None) + "}"
    if value is None:
        return "—"
    return json.dumps(value) if isinstance(value, list) else str(value)


def _differs(c: RunComparison) -> list[str]:
    if not c.differs:
        return ["what differs: nothing in their settings (the same variant, another tag or database?)"]
    lines = ["what differs (a | b):"]
    for key, (x, y) in c.differs.items():
        lines.append(f"  {key:<14} {_value(x)}")
        lines.append(f"  {'':<14} {_value(y)}")
    if any(r.run.metric == "pass@k" for r in (c.a, c.b)):
        lines.append("  (— for a pass@k run's feedback mode and critic: it shows no feedback)")
    return lines


def _at_t(c: RunComparison) -> list[str]:
    lines = ["a − b at each t, on the tasks both count there:",
             f"  {'t':>3}  {'a':<6} {'b':<6} {'a − b [95% CI]':<25} {'p':<8} n"]
    for x in c.at_t:
        p = "—" if x.p_value is None else fmt_p(x.p_value)
        lines.append(f"  {x.t:>3}  {fmt_number(x.a_value, digits=3):<6} {fmt_number(x.b_value, digits=3):<6} "
                     f"{fmt_estimate(x.difference, digits=3):<25} {p:<8} {x.difference.n}")
    if not c.at_t:
        lines.append("  (no t: a run has K = 0)")
    if any(x.shows_range for x in c.at_t):
        lines += ["  " + line for line in whole_items(
            "a − b if errors were failures / successes:",
            [f"t={x.t} {fmt_number(x.if_failures, True, 3)} / {fmt_number(x.if_successes, True, 3)}"
             for x in c.at_t], 76)]
    last = c.at_t[-1] if c.at_t else None
    if last is not None and last.difference.value is not None:
        found = ("no difference (they disagree on too few)" if last.detectable is None
                 else f"{last.detectable:.2f}")
        lines.append(f"  {last.difference.n} tasks detect {found} at t = {last.t} with 80% power "
                     "(α 0.05, as `seqk plan`)")
    return lines


def _spend(c: RunComparison) -> list[str]:
    a, b = c.a.run, c.b.run
    unpriced = not all(p.cost_usd_per_task is not None for r in (a, b) for p in r.curve) or any(
        r.spend and r.spend.n_unpriced_calls for r in (a, b))
    # a free (local) model costs $0: every figure would read $0 (issue 28.1)
    free = not unpriced and any(not r.spend or not r.spend.cost_usd for r in (a, b))
    priced = not unpriced and not free
    unit = "US$" if priced else "tokens"
    lines = [f"spend per task up to t ({unit}, each run over its own tasks; every call, judge and critic included):",
             f"  {'t':>3}  {'a':<12} b"]

    def spend(run: Any, t: int) -> str:
        if t > len(run.curve):
            return "—"
        p = run.curve[t - 1]
        x = p.cost_usd_per_task if priced else p.tokens_per_task
        return "—" if x is None else (f"${x:.5f}" if priced else f"{x:,.0f}")

    for t in range(1, max(a.k, b.k) + 1):
        lines.append(f"  {t:>3}  {spend(a, t):<12} {spend(b, t)}")
    if unpriced:
        lines.append("  (in tokens: a call of these runs has no price, and tokens of different models are "
                     "not money)")
    elif free:
        lines.append("  (in tokens: a run here cost nothing, a local or free model, so US$ would compare nothing)")
    return lines


def equal_budget_lines(e: BudgetComparison) -> list[str]:
    """Both frontiers at equal spend per task: each run's frontier at each budget (its best cell, or
    two mixed), a − b with its pointwise interval, the simultaneous band, p and n; the cross-over and
    what the band settles."""
    head = "at equal spend per task"
    if e.unit is None:
        return [f"{head}: {e.refusal}."]
    lines = [f"{head} ({e.unit}; each run's frontier at the budget: its best cell within it, or a+b, two "
             "cells mixed across tasks to spend it; taken again in every resample; band: simultaneous over "
             "the budgets):"]
    if not e.rows:
        lines.append(f"  no budget at which both frontiers are measured (a's cells cost {_range(e.cells_a, e.unit)}, "
                     f"b's {_range(e.cells_b, e.unit)}): nothing is compared at equal spend")
        return lines
    lines.append(f"  {'budget':<11}{'a cell':<7} {'a':<6} {'b cell':<7} {'b':<6} {'a − b [95% CI]':<25} "
                 f"{'band':<17} {'p':<8} n")
    for r in e.rows:
        band = "—" if r.band is None else f"[{fmt_number(r.band[0], True, 3)}, {fmt_number(r.band[1], True, 3)}]"
        lines.append(f"  {fmt_spend(r.budget, e.unit):<11}{_cell(r.a):<7} {_cell_value(r.a):<6} {_cell(r.b):<7} "
                     f"{_cell_value(r.b):<6} {fmt_estimate(r.difference, digits=3):<25} {band:<17} "
                     f"{'—' if r.p_value is None else fmt_p(r.p_value):<8} {r.n_tasks}")
    if e.if_failures:
        lines += ["  " + line for line in whole_items(
            "range: a − b if errors were failures / successes, budget by budget:",
            [f"{fmt_number(x, True, 3)} / {fmt_number(y, True, 3)}" for x, y in zip(e.if_failures, e.if_successes,
                                                                              strict=True)], 76)]
    return lines + [f"  {line}" for line in summary(e)]


def _cell(f: Any) -> str:
    """'2×3', or '1×3+2×3' where the frontier mixes two cells at the budget."""
    if f is None:
        return "—"
    return f"{f.width}×{f.depth}" + (f"+{f.mixed[0]}×{f.mixed[1]}" if f.mixed else "")


def _cell_value(f: Any) -> str:
    return "—" if f is None else f"{f.value:.3f}"


def _range(cells: list[Any], unit: str | None) -> str:
    if not cells:
        return "nothing"
    spends = [c.spend for c in cells]
    return f"{fmt_spend(min(spends), unit)} to {fmt_spend(max(spends), unit)}"


def _flips(c: RunComparison, db: str | None, max_flips: int | None, names: tuple[str, str] | None) -> list[str]:
    f = c.flips
    lines = [f"flips (a task is solved when any attempt, chain or sample succeeded): {len(f.a_only)} solved "
             f"by a only, {len(f.b_only)} by b only; {f.n_both} by both, {f.n_neither} by neither"
             + (f", {f.n_unsettled} not settled" if f.n_unsettled else "")]
    called = names or (c.a.run.run_id, c.b.run.run_id)
    for side, flips, run, name in (("a", f.a_only, c.a, called[0]), ("b", f.b_only, c.b, called[1])):
        if not flips:
            continue
        lines.append(f"  solved by {side} only:")
        shown = flips if max_flips is None else flips[:max_flips]
        for flip in shown:
            chain = f" (chain {flip.chain_index})" if run.chains > 1 else ""
            lines.append(f"    task {flip.task_index} {flip.task_id} · at attempt {flip.attempt_index}{chain} · "
                         + inspect_command(name, flip.task_index, db))
        if len(shown) < len(flips):
            lines.append(f"    … {len(flips) - len(shown)} more (--max-flips 0 lists every one; so does "
                         "--format json)")
    if f.a_only or f.b_only:
        lines.append(f"  side by side in `seqk view`: {view_path(c.a.run.run_id, c.b.run.run_id)}/tasks/N")
    return lines


# ---------------------------------------------------------------------------
# `report --compare --by AXIS`


def grouped_text(result: GroupedComparison) -> str:
    """One block per group: what its runs share, each pair (a − b at t, interval, p, q, n), the
    ranking when more than two runs compete; then the notes."""
    head = (f"compared by {result.by}: {len(result.pairs)} pair(s) in {len(result.groups)} group(s); q: "
            f"Benjamini–Hochberg over the table")
    blocks = [head] + [_group_block(g) for g in result.groups]
    return "\n\n".join(blocks) + "\n\n" + "\n".join(f"• {note}" for note in result.notes) + "\n"


_SHARED = {"slice": "", "metric": "", "actor_model": "actor ", "feedback_mode": "feedback ", "verifier": "verifier ",
           "judge_model": "judge "}


def _shared(group: Group) -> str:
    """What every run of the group shares, in words."""
    return " · ".join(f"{_SHARED[k]}{v}" for k, v in group.shares.items() if v is not None and k in _SHARED)


def _group_block(group: Group) -> str:
    lines = [_shared(group)]
    for p in group.pairs:
        c = p.comparison
        pv = "—" if c.p_value is None else fmt_p(c.p_value)
        q = "—" if p.q_value is None else fmt_p(p.q_value)
        lines += [f"  a {p.a.label}", f"  b {p.b.label}",
                  f"    a − b at t={c.t}: {fmt_estimate(c.difference, digits=3)} p={pv} q={q} n={c.difference.n}"
                  f" · a {fmt_number(c.a_value, digits=3)}, b {fmt_number(c.b_value, digits=3)}"]
        if p.also_differs:
            lines.append(f"    also differ: {', '.join(p.also_differs)}")
    if group.ranking:
        lines.append(f"  ranking at t={group.ranking_t} on the {group.n_ranked} task(s) all "
                     f"{len(group.members)} runs count (rank [95% bootstrap interval] value):")
        lines += [f"    {r.rank} [{r.low}, {r.high}]  {r.value:.3f}  {r.member.label}" for r in group.ranking]
    return "\n".join(lines)


def grouped_markdown(result: GroupedComparison) -> str:
    """A Markdown table, one row per pair, then the rankings and the notes."""
    lines = ["| group | a | b | t | a − b [95% CI] | p | q | n | also differ |", "|" + "---|" * 9]
    for g in result.groups:
        for p in g.pairs:
            c = p.comparison
            cells = [_shared(g), p.a.label, p.b.label, str(c.t), fmt_estimate(c.difference, digits=3),
                     "—" if c.p_value is None else fmt_p(c.p_value),
                     "—" if p.q_value is None else fmt_p(p.q_value), str(c.difference.n), ", ".join(p.also_differs)]
            lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    for g in result.groups:
        if g.ranking:
            lines += ["", f"Ranking of {_shared(g)} at t={g.ranking_t} ({g.n_ranked} tasks):", ""]
            lines += [f"{r.rank}. {r.member.label}: {r.value:.3f}, rank interval [{r.low}, {r.high}]"
                      for r in g.ranking]
    return "\n".join(lines + [""] + [f"- {n}" for n in result.notes]) + "\n"
