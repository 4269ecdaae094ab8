"""What `seqk probe`, `seqk doctor` and `seqk limits` print: each model's answer to the probe, the
embedded model's check, each endpoint's remembered limit on calls in flight."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from seqk.render.console import age_text


def print_probe(out: Any, results: Sequence[Any]) -> None:
    """One line per model probed (seqk.models.probe.ProbeResult): latency, tokens and cost, or the error."""
    for r in results:
        where = f" at {r.api_base}" if r.api_base else ""
        head = f"{r.model}{where} ({', '.join(r.roles)})"
        if r.ok:
            cost = "cost unknown" if r.cost_usd is None else f"${r.cost_usd:.6f}"
            out.print(f"[green]ok[/]    {head}: {r.latency_s:.2f} s, {r.input_tokens} in / "
                      f"{r.output_tokens} out tokens, {cost}: {r.text!r}", highlight=False)
        else:
            out.print(f"[red]error[/] {head}: {r.error}", highlight=False)


def print_doctor(out: Any, r: Any) -> None:
    """The embedded model's check (seqk.models.local.doctor.DoctorReport), its verdict last when it runs."""
    out.print(f"[bold]{r.model}[/]  {r.path or ''}", highlight=False)
    if r.llama_cpp_python:
        out.print(f"  llama-cpp-python {r.llama_cpp_python}; build: {r.build_features}", markup=False)
    out.print(f"  this CPU: {' '.join(r.cpu_flags) or 'unknown'}", markup=False)
    if r.ok:
        out.print(f"  loaded in {r.load_s:.1f} s; generated {r.output_tokens} tokens at "
                  f"{r.tokens_per_s:.0f} tokens/s: {r.text!r}", markup=False)
        out.print(f"[green]ok[/]: {r.message}", highlight=False)


def remembered_limit_lines(limits: Sequence[Any]) -> list[str]:
    """One line per endpoint's remembered limit (seqk.run.limits.RememberedLimit): what it
    sustained, how long ago, where the next run starts."""
    if not limits:
        return ["no endpoint limit remembered yet (a run against a server records one)"]
    lines = []
    for r in limits:
        where = r.api_base or "(the provider's own endpoint)"
        if r.sustained is None:
            lines.append(f"{r.model} at {where}: forgotten {age_text(r.age_hours * 3600)} ago; "
                         "the next run starts at 4")
            continue
        how = f"bounded by {r.rate_limited} 429s" if r.bounded else "no 429"
        lines.append(f"{r.model} at {where}: {r.sustained} calls in flight ({how}), "
                     f"{age_text(r.age_hours * 3600)} ago; the next run starts at {r.start or 4}")
    return lines
