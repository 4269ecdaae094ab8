"""`seqk status` as a table that never cuts a run id.

Run ids are long (`<slice>/<metric>/<agent>/<verifier>/<feedback>`) and runs listed together
share most of their slots: at 120 columns five ARC runs all read `arcagi2-eval…`, the part
that tells them apart cut away. So the slots every listed run shares at the front are
printed once, in the title, and each row shows the rest. When the table is wider than the
terminal, each run becomes a block instead: its id on a line of its own, its figures on
the next, so a narrow terminal wraps text and never cuts a cell to `…`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from seqk.analysis.status import RunStatus

COLUMNS = ("run", "metric", "k", "tasks", "finished", "passed", "attempts", "errors",
           "tokens in/out", "cost $", "updated")


def shared_prefix(run_ids: Sequence[str]) -> str:
    """The leading `/`-slots every run id shares, leaving each id at least its last slot;
    '' for fewer than two runs (one id is shown whole)."""
    if len(run_ids) < 2:
        return ""
    split = [run_id.split("/") for run_id in run_ids]
    shared: list[str] = []
    for slots in zip(*(s[:-1] for s in split), strict=False):
        if len(set(slots)) != 1:
            break
        shared.append(slots[0])
    return "/".join(shared)


def _cells(r: RunStatus, prefix: str) -> list[str]:
    cost = "unknown" if r["cost_usd"] is None else f"{r['cost_usd']:.4f}"
    if r["n_unpriced_calls"] and r["cost_usd"] is not None:
        cost = f"≥{cost} ({r['n_unpriced_calls']} unpriced)"
    return [r["run_id"].removeprefix(f"{prefix}/") if prefix else r["run_id"], r["metric"],
            str(r["k"]), str(r["n_tasks"]), str(r["n_finished"]), str(r["n_passed"]),
            str(r["n_valid_attempts"]), str(r["n_error_attempts"]),
            f"{r['input_tokens']}/{r['output_tokens']}", cost, str(r["updated_at"])[:19]]


def status_view(rows: Sequence[RunStatus], width: int) -> Any:
    """`seqk.analysis.status.status` rows for a console `width` columns wide: a rich Table when it
    fits, else one block of text per run."""
    from rich.table import Table
    from rich.text import Text

    prefix = shared_prefix([r["run_id"] for r in rows])
    title = f"{len(rows)} run(s)" + (f", every id starting {prefix}/" if prefix else "")
    heads = list(COLUMNS)
    body = [_cells(r, prefix) for r in rows]
    natural = 1 + sum(3 + max(len(cell) for cell in column) for column in zip(heads, *body, strict=True))
    if natural > width:
        blocks = [title]
        for cells in body:
            run_id, metric, k, n_tasks, finished, passed, attempts, errors, tokens, cost, updated = cells
            blocks.append(f"{run_id}\n  {metric} K={k} · {finished}/{n_tasks} tasks finished, {passed} "
                          f"passed · {attempts} attempts, {errors} errors · tokens in/out {tokens} · "
                          f"cost {cost if cost == 'unknown' else '$' + cost} · updated {updated}")
        return Text("\n".join(blocks))
    table = Table(title=title)
    for head in heads:
        table.add_column(head, overflow="fold")
    for cells in body:
        table.add_row(*cells)
    return table


def batches_table(rows: Sequence[RunStatus]) -> Any:
    """The runs' provider batches, newest first (state and age), as a rich Table; None without any."""
    batches = [b for r in rows for b in r["batches"]]
    if not batches:
        return None
    from rich.table import Table

    from seqk.render.console import age_text

    shown = Table(title=f"{len(batches)} batch(es), newest first (age: since submitted, to the end "
                        "for a finished one)")
    for col in ("run", "role", "round", "provider", "batch id", "items done", "state", "age"):
        shown.add_column(col)
    for b in batches:
        shown.add_row(b["run_id"], b["role"], str(b["round"]), b["provider"], b["batch_id"] or "-",
                      f"{b['n_done'] or 0}/{b['n_items']}", b["state"], age_text(b["age_s"]))
    return shown
