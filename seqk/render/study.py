"""What `seqk study` and `seqk plan study.yaml` show, as plain lines: the study's header, a
progress line at each look (the interval narrowing), the closing summary; the plan's table; and
the report's study section. Rendering only: the figures come from seqk.run.study and
seqk.analysis.study."""

from __future__ import annotations

from typing import Any

WORDS = {"seq_better": "seq better", "partner_better": "partner better",
         "no_practical_difference": "no practical difference", "undecided": "undecided"}
REASONS = {"decided": "decided", "tasks_exhausted": "ran out of tasks", "budget": "budget reached",
           "error_share": "too many tasks censored by errors (over 5%)",
           "no_cell": "no cell fits the budget per task"}
ORDER_SHOWN = 10


def usd(value: float | None) -> str:
    """'$0.0123', or 'unpriced'."""
    return "unpriced" if value is None else f"${value:.4f}"


def sequence_text(low: float, high: float, alpha: float, estimate: float | None = None) -> str:
    """'+0.110, 95% sequence [+0.012, +0.253]'."""
    level = f"{100 * (1 - alpha):g}%"
    point = f"{estimate:+.3f}, " if estimate is not None else ""
    return f"{point}{level} sequence [{low:+.3f}, {high:+.3f}]"


def header(result: Any) -> list[str]:
    """Who is compared, on what question, in which order; whether it resumes; notes."""
    spec = result.spec
    order = ", ".join(str(i) for i in spec.order[:ORDER_SHOWN]) + (", …" if len(spec.order) > ORDER_SHOWN else "")
    question = ("lift: seq@K − the partner's value at K" if spec.question == "lift" else
                f"equal budget: best seq@k cell − the partner's at ${spec.budget_usd_per_task:g} per task")
    lines = [f"study {spec.study_id}" + (" (resumed)" if result.resumed else ""),
             f"  seq      {spec.seq.run_id}",
             f"  partner  {spec.partner.run_id}",
             f"  question {question}; α = {spec.alpha:g}" + (f", margin ±{spec.margin:g}" if spec.margin else "")
             + (f", budget ${spec.budget_usd:g} over both arms" if spec.budget_usd is not None else ""),
             f"  task order (seed {spec.seed}): {order} — {len(spec.order)} tasks, {spec.window} a window"]
    if result.updates:
        last = result.updates[-1]
        lines.append(f"  stored: {last.n_tasks} tasks in the sequence, "
                     f"{sequence_text(last.low, last.high, spec.alpha, last.estimate)}")
    lines += [f"  note: {note}" for note in result.notes]
    return lines


def progress(update: Any, n_available: int, alpha: float) -> str:
    """One look: 'tasks 64/600: seq − partner +0.109, 95% sequence [-0.055, +0.337]; $0.0083 spent'."""
    if update.n_tasks == 0 and update.cells and "seq" in update.cells:
        cells = update.cells
        return (f"pilot: {update.n_used} tasks; cells seq {cells['seq'][0]}×{cells['seq'][1]}, partner "
                f"{cells['partner'][0]}×{cells['partner'][1]}; {usd(update.spent_usd)} spent")
    ranged = f" ({update.n_ranged} as ranges)" if update.n_ranged else ""
    text = (f"tasks {update.n_tasks}/{n_available}{ranged}: seq − partner "
            f"{sequence_text(update.low, update.high, alpha, update.estimate)}; {usd(update.spent_usd)} spent")
    if update.stop_reason:
        text += f" → {WORDS[update.decision]}, {REASONS.get(update.stop_reason, update.stop_reason)}"
    return text


def summary(result: Any) -> list[str]:
    """The closing lines: the decision and why it stopped, the sequence, tasks and money."""
    data = result.to_json()
    spec = result.spec
    seq = data["sequence"]
    lines = []
    if result.interrupted:
        lines.append("interrupted: what finished is saved; run the same command to resume the study")
    elif result.error:
        lines.append(f"stopped by an error in an arm: {result.error}")
    else:
        reason = REASONS.get(data["stop_reason"], data["stop_reason"] or "not stopped")
        lines.append(f"decision: {WORDS[data['decision']]} ({reason})")
    lines.append(f"  seq − partner over {seq['n_tasks']} tasks: "
                 f"{sequence_text(seq['low'], seq['high'], spec.alpha, seq['estimate'])}"
                 + (f"; {seq['n_ranged']} censored by errors, entered as ranges" if seq["n_ranged"] else ""))
    used, available = data["tasks_used"], data["tasks_available"]
    lines.append(f"  tasks used: {used} of {available} ({100 * used / max(available, 1):.0f}%)")
    spent, full = data["spent_usd"], data["full_cost_usd"]
    money = f"  spent: {usd(spent)} over both arms"
    if spent is not None and full is not None:
        money += (f"; a full run of both arms: {usd(full)} (at the spend per task so far); "
                  f"saved {usd(max(full - spent, 0.0))} ({100 * max(full - spent, 0.0) / full:.0f}%)"
                  if full > 0 else "")
    lines.append(money)
    if result.pilot_note:
        lines.append(f"  {result.pilot_note}")
    return lines


def plan_lines(plan: Any) -> list[str]:
    """`seqk plan study.yaml`: the study's rule against a fixed-n test, per lift."""
    level = f"{100 * (1 - plan.alpha):g}%"
    lines = [f"study {plan.study_id} ({plan.state}): {plan.n_available} tasks, {plan.window} a window, "
             f"α = {plan.alpha:g}" + (f", margin ±{plan.margin:g}" if plan.margin else ""),
             f"  discordance {plan.discordance:.3f}, {plan.discordance_source}",
             f"  spend per task, both arms: {usd(plan.cost_per_task_usd)} ({plan.cost_source})",
             f"  simulated from the study's own rule ({level} confidence sequence, a look per window), "
             f"{plan.replicates} studies per lift:",
             f"  in a world with no lift it decides a sign in {100 * plan.null_decided:.1f}% of studies "
             f"(at most {100 * plan.alpha:g}%)",
             "     lift  decides seq   tasks to stop (mean, median)   US$ (mean)    fixed-n (80% power)  US$"]
    for row in plan.rows:
        fixed = f"{row.fixed_n_tasks}" + (" (> available)" if row.fixed_n_tasks > plan.n_available else "")
        lines.append(f"    {row.lift:5.3f}  {100 * row.decided_seq:5.1f}%       "
                     f"{row.mean_tasks:7.1f}, {row.median_tasks:5.0f}             {usd(row.mean_cost_usd):>10}    "
                     f"{fixed:>19}  {usd(row.fixed_n_cost_usd)}")
    lines.append("  fixed-n: McNemar's test, Connor 1987; the study may stop at any look with its error "
                 "rate kept, a fixed-n test only at its n")
    return lines


def report_lines(studies: list[Any]) -> list[str]:
    """The report's study section: each study's decision and its sequence at each look."""
    lines = []
    for s in studies:
        lines.append(f"study {s.study_id}: {s.seq_run_id} vs {s.partner_run_id} ({s.question}, "
                     f"α = {s.alpha:g}{f', margin ±{s.margin:g}' if s.margin else ''})")
        if not s.looks:
            lines.append("  no look yet")
            continue
        last = s.looks[-1]
        reason = REASONS.get(last.stop_reason, "not stopped") if last.stop_reason else "not stopped"
        lines.append(f"  {WORDS[last.decision]} ({reason}); {last.n_tasks} tasks in the sequence, "
                     f"{last.n_used} used of {s.n_available}; {usd(last.spent_usd)} spent, a full run "
                     f"{usd(last.full_cost_usd)}")
        lines.append("    tasks  sequence")
        for look in shown_looks([look for look in s.looks if look.n_tasks]):
            lines.append(f"    {look.n_tasks:5d}  {sequence_text(look.low, look.high, s.alpha, look.estimate)}")
    return lines


def shown_looks(looks: list[Any], most: int = 10) -> list[Any]:
    """At most `most` looks, evenly spread, the first and the last always among them."""
    if len(looks) <= most:
        return looks
    picks = sorted({round(i * (len(looks) - 1) / (most - 1)) for i in range(most)})
    return [looks[i] for i in picks]
