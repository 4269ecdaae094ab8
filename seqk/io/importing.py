"""Reading seq_k-style folder trees into the database (`seqk import DIR`), so runs made
elsewhere, or by seq_k itself, join status, reports and SQL.

A run folder is any folder holding task-<i>/ folders; its run id is the last five parts
of its path (<slice>/<metric>/<agent>/<verifier>/<feedback>). A tree exported by seqk
restores exactly the rows it came from: config.json's `seqk` section is the runs row,
and the attempt files carry attempt_uid, times, status, error and each call's extras.

Without config.json (it stays local and is never uploaded) the runs row is rebuilt
from summary.json, the attempt files and the path: `config`, `options`,
`temperature` and `fingerprint_fields` are then empty, `created_at` is the first
attempt's start. A seq_k tree also lacks seqk's per-attempt fields: attempts are 'ok',
get a stable uuid5 id (so importing twice adds nothing), the import time as their
times, and a cost worked out from seqk's price table.

Importing adds what the database lacks: the run if new, tasks by index, attempts by
attempt_uid. It refuses a run whose fingerprint, k or generation differ from the one
already stored, and a task whose identity differs, rather than mix them.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from seqk import store
from seqk.config.identity import fingerprint, metric_slot
from seqk.errors import BadInput, NotFound, RunConflict
from seqk.io import tree
from seqk.models import cost_usd
from seqk.records import AttemptRecord
from seqk.version import __version__

# Stable ids for attempts of trees without attempt_uid: importing twice adds nothing.
_UID_NAMESPACE = uuid.UUID("5b1d1f0e-7a43-4c55-9a53-6f1e2a0c5e11")
_METRICS = {metric_slot(m): m for m in ("pass@k", "seq@k")}
_RUN_COLUMNS = (
    "run_id", "benchmark", "slice", "metric", "k", "generation", "feedback_mode", "actor_model",
    "judge_model", "critic_model", "verifier", "temperature", "options", "config", "fingerprint",
    "fingerprint_fields", "created_at", "updated_at", "seqk_version", "shows_grading_info",
    "soft_score_clipped",
)


@dataclass
class ImportResult:
    """What importing one run folder did."""

    run_id: str
    path: Path
    new_run: bool
    tasks: int
    """Tasks added."""
    attempts: int
    """Attempts added (each with its calls)."""
    calls: int
    skipped: int
    """Attempts the database already had."""

    def describe(self) -> str:
        """One line for the user."""
        what = "new run" if self.new_run else "existing run"
        return (f"imported {self.run_id} ({what}) from {self.path}: {self.tasks} tasks, "
                f"{self.attempts} attempts, {self.calls} calls added; {self.skipped} attempts "
                f"already in the database")


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise NotFound(f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict):
        raise BadInput(f"{path} holds a JSON {type(data).__name__}, not the object seq_k writes")
    return data


# A file that parses as JSON but lacks a field seq_k always writes, or has one of the wrong type.
_MALFORMED = (AttributeError, KeyError, TypeError, ValueError)


def find_runs(root: Path) -> list[Path]:
    """Every run folder under root (root itself included): folders holding task-<i>/."""
    found = {p.parent.parent for p in root.rglob("task_meta.json")
             if p.parent.name.startswith("task-")}
    found |= {p.parent.parent for p in root.rglob("attempt-*.json")
              if p.parent.name.startswith("task-")}
    if root.name.startswith("task-"):
        found.add(root.parent)
    return sorted(found)


def _number(path: Path) -> int:
    try:
        return int(path.name.split("-", 1)[1].split(".", 1)[0])
    except ValueError:
        raise BadInput(f"{path}: seq_k numbers its folders and files (task-1, attempt-1.json)") from None


def _attempt_files(run_path: Path) -> list[Path]:
    files = list(run_path.glob("task-*/attempt-*.json"))
    files += run_path.glob(f"task-*/{tree.ERRORS_DIR}/attempt-*.json")
    return sorted((p for p in files if not tree.is_temp(p)),
                  key=lambda p: (_number(p.parent if p.parent.name != tree.ERRORS_DIR
                                         else p.parent.parent), _number(p), p.name))


def _run_row(run_id: str, config: dict[str, Any], summary: dict[str, Any],
             attempts: list[dict[str, Any]], now: datetime) -> dict[str, Any]:
    if isinstance(config.get("seqk"), dict):
        # Only the columns import_run names: a newer export's extra keys are ignored.
        row = {name: config["seqk"].get(name) for name in _RUN_COLUMNS}
        for name in ("options", "config", "fingerprint_fields"):
            row[name] = json.dumps(row[name]) if row[name] is not None else None
        for name in ("created_at", "updated_at"):
            row[name] = datetime.fromisoformat(row[name])
        return row
    slots = run_id.split("/")
    first = attempts[0] if attempts else {}
    judge_model = summary.get("judge_model", (first.get("judge") or {}).get("model"))
    critic_model = summary.get("critic_model", (first.get("critic") or {}).get("model"))
    metric = (summary.get("metric") or config.get("metric") or first.get("metric")
              or _METRICS.get(slots[1], slots[1]))
    fields = {
        "imported": True, "benchmark": summary.get("benchmark") or config.get("benchmark"),
        "slice": slots[0], "metric": metric,
        "feedback_mode": (summary.get("feedback_mode") or config.get("feedback_mode")
                          or first.get("feedback_mode") or slots[4].split("@")[0].split(".")[0]),
        "actor_model": (config.get("model") or summary.get("model")
                        or (first.get("actor") or {}).get("model") or slots[2].replace("__", "/")),
        "judge_model": judge_model, "critic_model": critic_model,
        "options": config.get("options") or {}, "temperature": config.get("temperature"),
    }
    updated = summary.get("last_updated")
    return {
        "run_id": run_id,
        "benchmark": fields["benchmark"] or slots[0].split("-")[0],
        "slice": summary.get("slice") or slots[0],
        "metric": metric,
        "k": int(summary.get("k") or config.get("k")
                 or max((a["attempt_index"] for a in attempts), default=1)),
        "generation": int(summary.get("generation") or 1),
        "feedback_mode": fields["feedback_mode"],
        "actor_model": fields["actor_model"],
        "judge_model": judge_model,
        "critic_model": critic_model,
        "verifier": summary.get("verifier") or ("llm" if judge_model else slots[3]),
        "temperature": config.get("temperature"),
        "options": json.dumps(config.get("options") or {}),
        "config": json.dumps(config),
        "fingerprint": summary.get("fingerprint") or fingerprint(fields),
        "fingerprint_fields": json.dumps(fields),
        "created_at": now,  # the caller puts the first attempt's start here
        "updated_at": datetime.strptime(updated, tree.STAMP_FORMAT) if updated else now,
        "seqk_version": __version__,
        "shows_grading_info": None,  # a seq_k tree does not say
        "soft_score_clipped": None,  # seq_k clipped each score: its mean needs no clip
    }


def _task_row(task_path: Path, attempts: list[dict[str, Any]]) -> dict[str, Any]:
    meta = _read(task_path / "task_meta.json") or {}
    task_id = str(meta.get("task_id") or (attempts[0]["task_id"] if attempts else task_path.name))
    prompt = meta.get("prompt") or ""
    if not isinstance(prompt, str):
        raise BadInput(f"{task_path / 'task_meta.json'}: prompt is a {type(prompt).__name__}, not text")
    content_hash = meta.get("content_hash") or hashlib.sha256(
        json.dumps([task_id, prompt, None], sort_keys=True).encode()).hexdigest()
    extra = {k: v for k, v in meta.items()
             if k not in ("task_id", "task_index", "prompt", "content_hash", "meta")}
    return {"task_index": _number(task_path), "task_id": task_id, "prompt": prompt,
            "content_hash": content_hash, "meta": meta.get("meta") or extra}


def import_run(run_path: Path, db: store.DbLike = None) -> ImportResult:
    """Import one run folder; see the module docstring for what is added and refused."""
    run_path = Path(run_path)
    parts = run_path.resolve().parts
    if len(parts) < 6:
        raise NotFound(f"{run_path} is not a run folder <slice>/<metric>/<agent>/<verifier>/"
                       f"<feedback>/")
    now = datetime.now(UTC).replace(tzinfo=None)
    config = _read(run_path / "config.json") or {}
    summary = _read(run_path / "summary.json") or {}
    recorded = summary.get("run_id") if isinstance(summary, dict) else None
    run_id = tree.run_id_of(parts[-5:], recorded if isinstance(recorded, str) else None)
    files = _attempt_files(run_path)
    attempts = [_read(p) or {} for p in files]  # listed by glob: a file that vanished reads as empty
    try:
        row = _run_row(run_id, config, summary, attempts, now)
    except _MALFORMED as exc:
        raise BadInput(f"{run_path}: config.json, summary.json or an attempt file is malformed "
                       f"({type(exc).__name__}: {exc})") from None
    records = []
    for path, data in zip(files, attempts, strict=True):
        uid = data.get("attempt_uid") or str(uuid.uuid5(
            _UID_NAMESPACE, f"{run_id}/{path.relative_to(run_path).as_posix()}"))
        try:
            records.append(tree.attempt_record(
                data, run_id=run_id, generation=row["generation"], k=row["k"], attempt_uid=uid,
                imported_at=now, price=cost_usd))
        except _MALFORMED as exc:
            raise BadInput(f"{path} is not an attempt file seq_k or seqk writes "
                           f"({type(exc).__name__}: {exc})") from None
    if not isinstance(config.get("seqk"), dict) and records:
        row["created_at"] = min(r.started_at for r in records)
    by_task: dict[Path, list[dict[str, Any]]] = {}
    for path, data in zip(files, attempts, strict=True):
        task_path = path.parent.parent if path.parent.name == tree.ERRORS_DIR else path.parent
        by_task.setdefault(task_path, []).append(data)
    task_paths = set(run_path.glob("task-*")) | set(by_task)
    tasks = [_task_row(p, by_task.get(p, []))
             for p in sorted(task_paths, key=_number) if p.is_dir()]
    return _store(run_path, row, tasks, records, db)


def _store(run_path: Path, row: dict[str, Any], tasks: list[dict[str, Any]],
           records: list[AttemptRecord], db: store.DbLike) -> ImportResult:
    run_id = row["run_id"]
    with store.connect(db) as con:
        with store.transaction(con):
            existing = store.get_run(con, run_id)
            if existing is None:
                store.insert_imported_run(con, row)
            else:
                _check_same_run(existing, row)
            known = store.task_identities(con, run_id)
            for task in tasks:
                have = known.get(task["task_index"])
                if have is not None and have != (task["task_id"], task["content_hash"]):
                    raise RunConflict(
                        f"run {run_id}: task {task['task_index']} in {run_path} is "
                        f"{task['task_id']!r}, but the database holds {have[0]!r} with other "
                        f"content there; import into another database (--db)")
            new_tasks = [t for t in tasks if t["task_index"] not in known]
            store.insert_tasks(con, run_id, new_tasks)
        have_uids = store.attempt_uids(con, run_id)
        filled = store.valid_slots(con, run_id)
        new = []
        for r in records:
            slot = (r.generation, r.task_index, r.attempt_index)
            if r.attempt_uid in have_uids or (r.status == "ok" and slot in filled):
                continue
            new.append(r)
            if r.status == "ok":
                filled.add(slot)
        # A separate transaction (append_attempts opens its own): if it fails, the run
        # and its tasks stay, and importing again adds the attempts.
        store.append_attempts(con, new)
    return ImportResult(run_id, run_path, existing is None, len(new_tasks), len(new),
                        sum(len(r.calls) for r in new), len(records) - len(new))


def _check_same_run(existing: dict[str, Any], row: dict[str, Any]) -> None:
    for name in ("fingerprint", "k", "generation"):
        if existing[name] != row[name]:
            raise RunConflict(
                f"run {row['run_id']} is already in the database with another {name} "
                f"({existing[name]!r}, the folder has {row[name]!r}); importing would mix "
                f"results. Import into another database (--db).")


def import_tree(root: str | os.PathLike[str],
                db: store.DbLike = None) -> list[ImportResult]:
    """Import every run folder under root (or root itself, when it is one).

    Example: import_tree("old_runs/")
    """
    root = Path(root)
    if not root.is_dir():
        raise NotFound(f"no folder at {root}")
    runs = find_runs(root)
    if not runs:
        raise NotFound(f"no run folders (with task-<i>/ inside) under {root}")
    database = store.open(db)
    return [import_run(path, database) for path in runs]
