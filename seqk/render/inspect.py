"""`seqk inspect` as text: one task's whole trajectory (seqk.analysis.status.Trajectory), every
attempt with its prompt, output, verdict, judge reply, feedback and calls."""

from __future__ import annotations

import json
from typing import Any

from seqk.render.console import cut


def print_trajectory(out: Any, t: Any) -> None:
    """Each attempt of the task under a header (chain, attempt, verdict), then its calls."""
    from rich.markup import escape

    out.print(f"[bold]{t.run['run_id']}[/] · task {t.task['task_index']} ({t.task['task_id']}) · "
              f"{t.run['metric']} k={t.run['k']}")
    for a in t.attempts:
        tag = "" if a["counts"] else "  [dim](superseded: retried later)[/]"
        headline, message = _error_text(a["error"]) if a["status"] == "error" else ("", None)
        verdict = (f"[yellow]ERROR[/] {escape(headline)}" if a["status"] == "error"
                   else ("[green]PASS[/]" if a["success"] else "[red]FAIL[/]") + f" score={a['score']}")
        chain = f"chain {a['chain_index']} · " if t.run["chains"] > 1 else ""
        out.print(f"\n[bold]━━ {chain}attempt {a['attempt_index']} of {a['k']}[/] {verdict}{tag}")
        if message:
            out.print(f"  {message}", markup=False)
        out.print("[cyan]prompt[/]", markup=True)
        out.print(_prompt_text(t.run, a["prompt"]), markup=False)
        out.print("[cyan]output[/]")
        out.print(a["output"] if a["output"] is not None else "(none)", markup=False)
        if a["raw_eval_output"]:
            out.print("[cyan]judge[/]")
            out.print(a["raw_eval_output"], markup=False)
        if a["feedback"] is not None:
            out.print("[cyan]feedback[/]")
            out.print(a["feedback"], markup=False)
        for c in a["calls"]:
            cost = "cost unknown" if c["cost_usd"] is None else f"${c['cost_usd']:.6f}"
            line = f"  call {c['call_index']} {c['role']} {c['model']}: "
            if c["error"]:  # a failed call has no tokens to show
                line += f"failed after {c['retries']} retries: {c['error']}"
            else:
                line += (f"in={c['input_tokens']} cached={c['cached_tokens']} "
                         f"thinking={c['thinking_tokens']} out={c['output_tokens']} {cost} "
                         f"retries={c['retries']}")
            out.print(line, markup=False)
            if c["role"] != "actor":
                out.print(f"    prompt: {cut(c['prompt'], 400)}", markup=False)
                out.print(f"    output: {cut(c['output'], 400)}", markup=False)


def _prompt_text(run: Any, prompt: str | None) -> str:
    """A stored prompt as `seqk inspect` prints it: a chat's messages each under its role."""
    from seqk.records import stored_chat, transcript

    config = json.loads(run["config"]) if isinstance(run.get("config"), str) else run.get("config") or {}
    messages = stored_chat(prompt) if (config.get("prompt") or {}).get("chat") else None
    return transcript(messages) if messages else prompt or ""


def _error_text(error: Any) -> tuple[str, str | None]:
    """An attempt's error as a headline (stage, type, status code) and its message."""
    if not isinstance(error, dict):
        return "", (None if error is None else str(error))
    stage, kind, status = error.get("stage"), error.get("type") or "error", error.get("status_code")
    headline = (f"{stage}: {kind}" if stage else kind) + (f" (status {status})" if status is not None else "")
    return headline, error.get("message")
