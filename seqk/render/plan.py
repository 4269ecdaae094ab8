"""`seqk plan` as text: a variant's plan (seqk.run.plan.Plan), and a sweep's cells with their totals.
The plans come from seqk.api.plan and seqk.api.plan_sweep; this only lays them out."""

from __future__ import annotations

import json
from typing import Any


def print_plan(out: Any, p: Any) -> None:
    """A variant's plan: run id and state, roles, tasks, attempts and calls, cost, budget, power
    against pass@k, the prompt attempt 2 would see, the fingerprint and the variant's notes."""
    spec = p.spec
    out.print(f"[bold]{p.run_id}[/]  ({p.state})")
    for role in ("actor", "judge", "critic"):
        out.print(f"  {role:6} {p.roles[role] or '(none)'}")
    out.print(f"  tasks selected: {p.n_tasks}, to run: {p.n_tasks_pending}")
    if spec.mode.shows_grading_info:
        out.print(f"  [yellow]feedback mode {spec.feedback_mode} shows grading information to the actor: "
                  "results are not comparable with blind modes[/]")
    if spec.seq:
        out.print(f"  attempts to run: {p.attempts_min} to {p.attempts_max} "
                  f"(seq@k stops at a task's first success)")
        out.print(f"  actor calls: {p.attempts_min}–{p.attempts_max}; critic calls up to "
                  f"{p.critic_calls_max}")
    else:
        out.print(f"  attempts to run: {p.attempts_max} (pass@k: exactly k={spec.k} "
                  f"independent attempts per task)")
        out.print(f"  actor calls: {p.attempts_max}; no critic calls (pass@k shows no feedback)")
    if not p.price_known:
        out.print(f"  actor cost: unknown (no price for {spec.actor.model})")
    else:
        high = ("unbounded: set max_tokens" if p.actor_cost_high is None
                else f"${p.actor_cost_high:.4f}")
        out.print(f"  actor cost, rough (prompt chars/4; judge and critic not included): "
                  f"${p.actor_cost_low:.4f} to {high}")
        if p.tiers:
            out.print(f"  actor cost if every attempt runs, {len(p.tiers)} ways to pay (output at "
                      f"max_tokens={spec.actor.max_tokens or 0}; caching: the task prefix written once "
                      "per task, read by every later attempt):")
            for t in p.tiers:
                out.print(f"    {t['tier']:22} ${t['cost_usd']:.4f}   critical path: {t['critical_path']}",
                          highlight=False)
    for line in p.budget:
        out.print(f"  budget ({line.scope}): ${line.spent_usd:.4f} spent of ${line.budget_usd:.4f}, "
                  f"${max(line.remaining_usd, 0):.4f} left; an attempt reserves up to "
                  f"${line.attempt_usd:.4f} (its worst case: attempt 1 of the longest task)")
    power = p.power
    if power is not None:
        detectable = ("none: too few tasks" if power["detectable_lift"] is None
                      else f"{power['detectable_lift']:.3f}")
        out.print(f"  power vs pass@k (the report's paired test, continuity-corrected McNemar at 0, exact; "
                  f"α = 0.05 two-sided, 80% power): smallest detectable lift on {power['n_tasks']} tasks: "
                  f"{detectable}")
        out.print(f"    discordance {power['discordance']:.3f}, {power['discordance_source']}",
                  markup=False)
        if power["lift"] is not None:
            out.print(f"  a lift of {power['lift']:g} needs {power['tasks_needed']} tasks "
                      f"(this variant selects {power['n_tasks']})")
    _print_preview(out, p)
    out.print(f"  fingerprint: {p.fingerprint[:16]}…")
    for note in spec.notes:
        out.print(f"  note: {note}")


def _print_preview(out: Any, p: Any) -> None:
    """The retry protocol and the prompt attempt 2 would see (seq@k)."""
    preview = p.preview
    if preview is None:
        return
    differs = ", ".join(f"{k} {json.dumps(v, ensure_ascii=False)}" for k, v in p.protocol.items())
    seed = "the seed's"
    out.print(f"  retry prompt: {f'not {seed}: {differs}' if differs else seed}", markup=False, highlight=False)
    messages = preview["messages"]
    out.print(f"  attempt {preview['attempt_index']} would see (task {preview['task_index']}"
              + (f", {len(messages)} messages" if len(messages) > 1 else "") + "):", markup=False)
    from seqk.records import transcript

    text = messages[0]["content"] if len(messages) == 1 else transcript(messages)
    for line in text.splitlines():
        out.print(f"    │ {line}", markup=False, highlight=False)


def _cost(low: float | None, high: float | None, known: bool) -> str:
    if not known:
        return "actor cost unknown (no price)"
    return f"actor cost ${low or 0:.4f} to " + ("unbounded (no max_tokens)" if high is None else f"${high:.4f}")


def print_sweep_plan(out: Any, path: Any, found: Any, base: str) -> None:
    """Every cell of a sweep (seqk.run.plan.SweepPlan): its run, what is left to run, its calls and
    cost, and the command that runs it alone (`base`: how the sweep's base variant is shown); then
    the totals."""
    sweep, cells = found.sweep, found.cells
    n_partners = sum(cell.partner for cell, _ in cells)
    out.print(f"[bold]sweep {path}[/]: base {base}, {len(cells)} runs "
              f"({len(cells) - n_partners} cells, {n_partners} pass@k partner{'' if n_partners == 1 else 's'})",
              highlight=False)
    low = high = 0.0
    known = bounded = True
    attempts = [0, 0]
    critic = 0
    for n, (cell, p) in enumerate(cells, start=1):
        out.print(f"\n[bold]{n}. {cell.name}[/]", markup=True, highlight=False)
        out.print(f"  {p.run_id}  ({p.state})", markup=False, highlight=False)
        calls = (f"attempts {p.attempts_min} to {p.attempts_max}" if cell.spec.seq
                 else f"attempts {p.attempts_max}")
        out.print(f"  {calls}, critic calls up to {p.critic_calls_max}; "
                  f"{_cost(p.actor_cost_low, p.actor_cost_high, p.price_known)}", markup=False)
        out.print(f"  alone: {cell.command(sweep.base)}", markup=False, highlight=False)
        for note in cell.spec.notes:
            out.print(f"  note: {note}", markup=False, highlight=False)
        attempts[0] += p.attempts_min
        attempts[1] += p.attempts_max
        critic += p.critic_calls_max
        known = known and p.price_known
        bounded = bounded and p.actor_cost_high is not None
        low += p.actor_cost_low or 0.0
        high += p.actor_cost_high or 0.0
    out.print(f"\n[bold]total[/]: attempts {attempts[0]} to {attempts[1]}, critic calls up to {critic}; "
              + _cost(low, high if bounded else None, known) + " (rough: prompt chars/4, judge and critic "
              "not included)", highlight=False)
