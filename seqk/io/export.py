"""Exports of what the database holds: the canonical seq_k folder tree, Parquet for
other tools, and the hooks `seqk run` calls before and after a run (S3 check; export,
then upload).

The folder tree (layout and attempt shape: seqk/io/tree.py) is rebuilt from DuckDB, the
source of truth, every time. Files are written atomically and only when their content
changed, so re-exporting is idempotent; nothing is ever deleted. A file left by an
attempt that no longer counts (a k-restart started a new generation) is reported as
stale, never removed: its attempt is still in the database.

metric@t in summary.json is computed on success (not the soft score) over the tasks
whose outcome at t is known (`n_tasks` per t; a task cut short by an error is left out,
not failed); pass@t uses the unbiased estimator over all samples. The figures come
from the run_curve view (sql/views.sql), the one definition reports use too. Errored
attempts are not wrong answers: they are exported under task-<i>/errors/ and counted apart.

S3 sync is on only when a bucket is configured (variant `s3_bucket` or
$SEQK_S3_BUCKET), and off with --no-upload, `s3_sync: false` or SEQK_S3_SYNC=0.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from seqk import store
from seqk.errors import NotFound
from seqk.io import tree
from seqk.io.tree import iso, json_value
from seqk.models.pricing import PRICING_LAST_UPDATED
from seqk.store import queries

if TYPE_CHECKING:
    pass

__all__ = ["ExportResult", "export_root", "export_run", "export_runs"]

_TOKEN_KEYS = (*tree.TOKEN_FIELDS, "cost_usd", "n_unpriced_calls")


@dataclass
class ExportResult:
    """What exporting one run did."""

    run_id: str
    path: Path
    written: int = 0
    """Files created or changed."""
    unchanged: int = 0
    """Files already holding exactly this content (left untouched)."""
    stale: list[Path] = field(default_factory=list)
    """Attempt files no attempt of the current generation wrote (kept, never deleted)."""
    chains: int = 1
    """The run's chains per task; the folder tree holds chain 1 (seq_k's layout has one)."""

    def describe(self) -> str:
        """One line for the user."""
        line = (f"exported {self.run_id} to {self.path}: {self.written} files written, "
                f"{self.unchanged} unchanged")
        if self.chains > 1:
            line += (f"; chain 1 of {self.chains} (seq_k's layout holds one chain a task: "
                     "`seqk export --parquet` carries every chain)")
        if self.stale:
            line += (f"; {len(self.stale)} attempt files from attempts that no longer count "
                     f"were left in place (e.g. {self.stale[0]})")
        return line


def export_root(db: store.DbLike = None, to: str | os.PathLike[str] | None = None) -> Path:
    """Where run folders go: `to`, else the database's folder (runs/ by default)."""
    return Path(to) if to is not None else store.open(db).home


# ---------------------------------------------------------------------------
# Reading a run


@dataclass
class _RunData:
    run: dict[str, Any]
    tasks: list[dict[str, Any]]
    attempts: list[dict[str, Any]]
    calls: list[dict[str, Any]]
    tokens: list[dict[str, Any]]
    curve: list[dict[str, Any]]
    gains: dict[str, Any]
    """delta, EGS, LGS as seqk report computes them: on the tasks counted at K."""


def _fetch(con: Any, run_id: str) -> _RunData:
    run = store.get_run(con, run_id)
    if run is None:
        raise NotFound(f"no run {run_id!r} in the database; `seqk status` lists the runs")
    params = {"run_id": run_id}
    return _RunData(
        run=run,
        tasks=queries.export_tasks(con, **params),
        attempts=queries.export_attempts(con, **params),
        calls=queries.export_calls(con, **params),
        tokens=queries.export_tokens(con, **params),
        curve=queries.export_metric_curve(con, **params),
        gains=_gains(con, run),
    )


def _gains(con: Any, run: dict[str, Any]) -> dict[str, Any]:
    if run["metric"] != "seq@k":
        return {}
    from seqk.analysis import metrics

    (m,) = metrics.compute(con, [run["run_id"]])
    out: dict[str, Any] = {}
    for name, digits, estimate in (("delta", 4, m.delta), ("EGS", 3, m.egs), ("LGS", 3, m.lgs)):
        if estimate is not None and estimate.value is not None:
            out[name] = round(estimate.value, digits)
            out[f"{name}_ci95"] = [_round(estimate.low, digits), _round(estimate.high, digits)]
            out[f"{name}_n_tasks"] = estimate.n
    return out


# ---------------------------------------------------------------------------
# Building the files


def run_row_json(run: dict[str, Any]) -> dict[str, Any]:
    """The runs row as JSON (JSON columns parsed, times in ISO format): config.json's `seqk`."""
    return {name: iso(json_value(value)) if name in ("options", "config", "fingerprint_fields")
            else iso(value) for name, value in run.items()}


def _config_json(run: dict[str, Any]) -> dict[str, Any]:
    # seq_k's config.json is the frozen variant; its keys come first, then the exact
    # runs row under "seqk" so an import restores the run as it was.
    config = json_value(run["config"]) or {}
    return {
        "benchmark": run["benchmark"], "metric": run["metric"], "k": run["k"],
        "feedback_mode": run["feedback_mode"], "model": run["actor_model"],
        "judge_model": run["judge_model"], "critic_model": run["critic_model"],
        "temperature": run["temperature"], "task_indices": config.get("task_indices"),
        "continue": config.get("continue", False), "options": json_value(run["options"]),
        "seqk": run_row_json(run),
    }


def _tokens(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["model"]: {name: r[name] for name in _TOKEN_KEYS} for r in rows}


def _round(value: float | None, digits: int) -> float | None:
    return round(value, digits) if value is not None else None


def _run_summary(data: _RunData) -> dict[str, Any]:
    run = data.run
    label = "seq" if run["metric"] == "seq@k" else "pass"
    n_tasks = len({a["task_index"] for a in data.attempts if a["status"] == "ok"})
    summary: dict[str, Any] = {"metric": run["metric"], "model": run["actor_model"],
                               "feedback_mode": run["feedback_mode"], "tasks": n_tasks,
                               "k": run["k"]}
    curve = data.curve if n_tasks else []
    # Rounded as seq_k rounds them, so its readers print the same figures.
    for row in curve:
        summary[f"{label}@{row['t']}"] = _round(row["value"], 4)
    if curve:
        summary["se"] = {f"{label}@{row['t']}": _round(row["se"], 4) for row in curve}
    if curve:
        summary |= data.gains
    summary["tokens"] = _tokens([r for r in data.tokens if r["whole_run"]])
    summary["pricing_last_updated"] = PRICING_LAST_UPDATED
    summary["last_updated"] = tree.stamp(run["updated_at"])
    errors = [a for a in data.attempts if a["status"] == "error"]
    summary |= {
        "run_id": run["run_id"], "benchmark": run["benchmark"], "slice": run["slice"],
        "verifier": run["verifier"], "judge_model": run["judge_model"],
        "critic_model": run["critic_model"], "generation": run["generation"],
        "fingerprint": run["fingerprint"],
        # Tasks whose outcome at t is unknown (errors, unfinished) are left out at t.
        "n_tasks": {f"{label}@{row['t']}": row["n_tasks"] for row in curve},
        "attempts": sum(1 for a in data.attempts if a["status"] == "ok"),
        "errors": {"attempts": len(errors), "open": sum(1 for a in errors if a["counts"])},
    }
    return summary


def _task_summary(task: dict[str, Any], rows: list[dict[str, Any]],
                  tokens: list[dict[str, Any]]) -> dict[str, Any]:
    valid = [a for a in rows if a["status"] == "ok"]
    scores = [a["score"] for a in valid if a["score"] is not None]
    return {
        "task_id": task["task_id"],
        "task_index": task["task_index"],
        "success": any(bool(a["success"]) for a in valid),
        "best_score": max(scores) if scores else None,
        "last_updated": tree.stamp(max(a["finished_at"] for a in rows)),
        "attempts": [{"attempt": a["attempt_index"], "success": a["success"], "score": a["score"]}
                     for a in valid],
        "tokens": _tokens(tokens),
        "pricing_last_updated": PRICING_LAST_UPDATED,
        "errors": [{"attempt": a["attempt_index"], "attempt_uid": a["attempt_uid"],
                    "counts": a["counts"], **(json_value(a["error"]) or {})}
                   for a in rows if a["status"] == "error"],
    }


def _task_meta(task: dict[str, Any]) -> dict[str, Any]:
    return {"task_id": task["task_id"], "task_index": task["task_index"],
            "prompt": task["prompt"], "content_hash": task["content_hash"],
            "meta": json_value(task["meta"])}


def _write_run(root: Path, data: _RunData) -> ExportResult:
    run_id = data.run["run_id"]
    run_path = tree.run_dir(root, run_id)
    result = ExportResult(run_id, run_path, chains=int(data.run.get("chains") or 1))
    written: set[Path] = set()

    def put(path: Path, value: Any) -> None:
        if tree.write_atomic(path, tree.json_text(value)):
            result.written += 1
        else:
            result.unchanged += 1
        written.add(path)

    tasks = {t["task_index"]: t for t in data.tasks}
    by_task: dict[int, list[dict[str, Any]]] = {}
    for attempt in data.attempts:
        by_task.setdefault(attempt["task_index"], []).append(attempt)
    calls: dict[str, list[dict[str, Any]]] = {}
    for call in data.calls:
        calls.setdefault(call["attempt_uid"], []).append(call)
    task_tokens: dict[int, list[dict[str, Any]]] = {}
    for row in data.tokens:
        if not row["whole_run"]:
            task_tokens.setdefault(row["task_index"], []).append(row)

    for task_index, task in tasks.items():
        task_path = tree.task_dir(run_path, task_index)
        put(task_path / "task_meta.json", _task_meta(task))
        rows = by_task.get(task_index, [])
        if not rows:
            continue
        for attempt in rows:
            attempt = attempt | {"task_id": task["task_id"]}
            put(tree.attempt_path(run_path, attempt),
                tree.attempt_json(data.run, attempt, calls.get(attempt["attempt_uid"], [])))
        put(task_path / "summary.json",
            _task_summary(task, rows, task_tokens.get(task_index, [])))
    # The run-level files last: once summary.json is there, the tasks it sums are too.
    put(run_path / "summary.json", _run_summary(data))
    put(run_path / "config.json", _config_json(data.run))
    candidates = [*run_path.glob("task-*/attempt-*.json"),
                  *run_path.glob(f"task-*/{tree.ERRORS_DIR}/attempt-*.json")]
    result.stale = sorted(p for p in candidates if p not in written)
    return result


def export_run(run_id: str, db: store.DbLike = None, *,
               to: str | os.PathLike[str] | None = None) -> ExportResult:
    """Write one run's folder tree under `to` (default: the database's folder).

    Example: export_run("toy-plain/seqk/mock__actor/deterministic/binary", to="runs")
    """
    database = store.open(db)
    with database.connect(read_only=True) as con:
        data = _fetch(con, run_id)
    return _write_run(export_root(database, to), data)


def export_runs(runs: Sequence[str] = (), db: store.DbLike = None, *,
                to: str | os.PathLike[str] | None = None) -> list[ExportResult]:
    """Export every run matching the ids, globs or prefixes (all runs when none)."""
    database = store.open(db)
    with database.connect(read_only=True) as con:
        run_ids = store.resolve_run_ids(con, runs)
    # One short read per run: a long export never holds the file for all of them.
    return [export_run(run_id, database, to=to) for run_id in run_ids]


# ---------------------------------------------------------------------------
# S3 and the hooks of `seqk run`
