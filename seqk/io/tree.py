"""The canonical seq_k folder tree: where each file lives, and the per-attempt JSON
shape in both directions (database rows -> JSON for export, JSON -> rows for import).

    <root>/<slice>/<metric>/<agent>/<verifier>/<feedback>/     (= <root>/<run_id>, ':' as '~')
    ├── config.json            local only, never uploaded
    ├── summary.json
    └── task-<i>/
        ├── task_meta.json
        ├── summary.json
        ├── attempt-<j>.json   the attempt that counts in slot j, when it is valid
        └── errors/attempt-<j>.<attempt_uid>.json
                               attempts that ended in an error (a provider failure, a judge
                               reply that could not be parsed): kept apart so that a reader
                               of seq_k folders never mistakes an error for a wrong answer

Every field name, nesting, type and null follows the seed. seqk adds fields of its own
next to them (seq_k's readers ignore unknown keys), so an exported attempt re-imports to
the very rows it came from: attempt_uid, k, status, error, started_at and finished_at on
the attempt; call_index, cost_usd, latency_s, retries, error and started_at on each call.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from seqk.records import AttemptRecord, CallRecord
from seqk.store import unwritable_folder as unwritable_folder

TOKEN_FIELDS = ("input_tokens", "cached_tokens", "thinking_tokens", "output_tokens")
CALL_EXTRAS = ("call_index", "cost_usd", "latency_s", "retries", "error", "started_at")
CALL_TIERS = ("cache_write_tokens", "price_tier")
"""Per-call fields from schema 4 on; rows from other sources may lack them."""
ERRORS_DIR = "errors"
# seq_k's `last_updated` format: UTC, with '-' in place of ':' so it is safe in file names.
STAMP_FORMAT = "%Y-%m-%dT%H-%M-%SZ"


PATH_COLON = "~"
"""How a ':' of a run id (`mock/py:module:attr`, a model tag like `llama3:8b`) is spelt in a
folder name: Windows and many S3 tools refuse ':'. Import reads both spellings."""


def run_dir(root: str | os.PathLike[str], run_id: str) -> Path:
    """The run's folder: the run id is the path below the export root, ':' written '~'."""
    return Path(root, *(slot.replace(":", PATH_COLON) for slot in run_id.split("/")))


def run_id_of(slots: Sequence[str], recorded: str | None = None) -> str:
    """The run id of a run folder from its last five path slots: `recorded` (the run_id in its
    summary.json) when that is the id this folder spells, else the slots with '~' read as ':'
    (a folder exported before '~' keeps its ':' and reads as it is)."""
    folder = "/".join(slots)
    if recorded is not None and recorded.replace(":", PATH_COLON) == folder.replace(":", PATH_COLON):
        return recorded
    return folder.replace(PATH_COLON, ":")


def task_dir(run_path: Path, task_index: int) -> Path:
    """task-<i>/, with the 1-based canonical index."""
    return run_path / f"task-{task_index}"


def attempt_path(run_path: Path, attempt: dict[str, Any]) -> Path:
    """attempt-<j>.json for a valid attempt; errors/attempt-<j>.<uid>.json for an errored one."""
    folder = task_dir(run_path, attempt["task_index"])
    if attempt["status"] == "error":
        name = f"attempt-{attempt['attempt_index']}.{attempt['attempt_uid']}.json"
        return folder / ERRORS_DIR / name
    return folder / f"attempt-{attempt['attempt_index']}.json"


def stamp(value: datetime | None) -> str | None:
    """A timestamp in seq_k's `last_updated` format (naive datetimes are UTC)."""
    return value.strftime(STAMP_FORMAT) if value is not None else None


def json_text(value: Any) -> str:
    """JSON as seq_k writes it: UTF-8 kept, indented by 2, one trailing newline."""
    return json.dumps(value, ensure_ascii=False, indent=2, default=str) + "\n"


def write_atomic(path: Path, text: str) -> bool:
    """Write through a temp file and a rename; False (and nothing touched) when unchanged.

    Leaving unchanged files alone keeps re-export idempotent down to the mtime, so
    S3 uploads and file watchers see only what really changed.
    """
    data = text.encode("utf-8")
    try:
        if path.read_bytes() == data:
            return False
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    # Hidden and suffixed .tmp, so a crash leftover is neither read nor uploaded.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True


def is_temp(path: Path) -> bool:
    """A leftover of an interrupted atomic write."""
    return path.name.startswith(".") and path.name.endswith(".tmp")


def json_value(value: Any) -> Any:
    """A JSON column's value parsed (DuckDB hands JSON columns back as text)."""
    return json.loads(value) if isinstance(value, str) else value


def iso(value: Any) -> Any:
    """A time in ISO format; anything else as it is."""
    return value.isoformat() if isinstance(value, datetime) else value


def call_json(call: dict[str, Any]) -> dict[str, Any]:
    """One judge or critic call in the seed's shape, plus seqk's per-call fields."""
    out: dict[str, Any] = {"model": call["model"], "prompt": call["prompt"],
                           "output": call["output"]}
    out |= {name: call[name] for name in TOKEN_FIELDS}
    out |= {name: call[name] for name in CALL_EXTRAS}
    out |= {name: call.get(name) for name in CALL_TIERS}
    out["started_at"] = iso(call["started_at"])
    return out


def _actor_json(run: dict[str, Any], attempt: dict[str, Any],
                actor_calls: list[dict[str, Any]]) -> dict[str, Any]:
    actor: dict[str, Any] = {"model": run["actor_model"], "prompt": attempt["prompt"],
                             "output": attempt["output"]}
    single = len(actor_calls) == 1 and actor_calls[0]["prompt"] == attempt["prompt"] \
        and actor_calls[0]["output"] == attempt["output"]
    if single:
        # The usual case: the section *is* the one actor call, with its own tokens.
        call = call_json(actor_calls[0])
        actor["model"] = call.pop("model")
        del call["prompt"], call["output"]
        return actor | call
    # An agentic attempt (several actor calls, or none): the section holds the attempt's
    # prompt and output and the summed tokens; the calls themselves follow in `calls`.
    for name in TOKEN_FIELDS:
        values = [c[name] for c in actor_calls if c[name] is not None]
        actor[name] = sum(values) if values else None
    actor["calls"] = [call_json(c) for c in actor_calls]
    return actor


def attempt_json(run: dict[str, Any], attempt: dict[str, Any],
                 calls: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The seed's per-attempt JSON for one attempt row and its call rows."""
    by_role: dict[str, list[dict[str, Any]]] = {"actor": [], "judge": [], "critic": []}
    for call in sorted(calls, key=lambda c: c["call_index"]):
        by_role.setdefault(call["role"], []).append(call)
    return {
        "task_id": attempt["task_id"],
        "task_index": attempt["task_index"],
        "metric": run["metric"],
        "feedback_mode": run["feedback_mode"],
        "attempt_index": attempt["attempt_index"],
        "actor": _actor_json(run, attempt, by_role["actor"]),
        "judge": {
            "model": run["judge_model"],
            "success": attempt["success"],
            "score": attempt["score"],
            "raw_eval_output": attempt["raw_eval_output"],
            "details": json_value(attempt["judge_details"]),
            "calls": [call_json(c) for c in by_role["judge"]],
        },
        "critic": {
            "model": run["critic_model"],
            "feedback": attempt["feedback"],
            "calls": [call_json(c) for c in by_role["critic"]],
        },
        "attempt_uid": attempt["attempt_uid"],
        "k": attempt["k"],
        "status": attempt["status"],
        "error": json_value(attempt["error"]),
        "started_at": iso(attempt["started_at"]),
        "finished_at": iso(attempt["finished_at"]),
    }


# ---------------------------------------------------------------------------
# JSON -> rows (import)


def _time(value: Any, default: datetime) -> datetime:
    if not value:
        return default
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return datetime.strptime(value, STAMP_FORMAT)


def _int(value: Any) -> int | None:
    return int(value) if value is not None else None


def _call_record(role: str, data: dict[str, Any], default_time: datetime,
                 prompt: Any = None, output: Any = None) -> CallRecord:
    return CallRecord(
        role=role, model=data.get("model") or "unknown",
        prompt=data.get("prompt", prompt), output=data.get("output", output),
        input_tokens=_int(data.get("input_tokens")), cached_tokens=_int(data.get("cached_tokens")),
        thinking_tokens=_int(data.get("thinking_tokens")),
        output_tokens=_int(data.get("output_tokens")),
        cost_usd=data.get("cost_usd"), latency_s=data.get("latency_s"),
        retries=int(data.get("retries") or 0), error=data.get("error"),
        started_at=_time(data.get("started_at"), default_time),
        cache_write_tokens=_int(data.get("cache_write_tokens")),
        # NULL (a call from before price tiers, or a seq_k tree) was synchronous.
        price_tier=data.get("price_tier") or "sync")


Price = Callable[[str, int | None, int | None, int | None], float | None]
"""cost_usd(model, input_tokens, cached_tokens, output_tokens), as seqk.models.pricing has it."""


def attempt_record(data: dict[str, Any], *, run_id: str, generation: int, k: int,
                   attempt_uid: str, imported_at: datetime,
                   price: Price | None = None) -> AttemptRecord:
    """The attempt row and call rows one attempt file holds.

    Files seq_k wrote lack seqk's own fields: the attempt is then 'ok', its times are
    the import time, the actor section becomes one actor call, and a call's cost is
    worked out by `price(model, input, cached, output)` when given.
    """
    actor = data.get("actor") or {}
    judge = data.get("judge") or {}
    critic = data.get("critic") or {}
    started = _time(data.get("started_at"), imported_at)
    calls: list[tuple[int, CallRecord]] = []
    if "calls" in actor:
        actor_calls = [("actor", c) for c in actor["calls"]]
    else:
        actor_calls = [("actor", actor)] if actor.get("model") is not None else []
    sections = actor_calls + [("judge", c) for c in judge.get("calls") or []] \
        + [("critic", c) for c in critic.get("calls") or []]
    for position, (role, call) in enumerate(sections, start=1):
        record = _call_record(role, call, started, actor.get("prompt"), actor.get("output"))
        if record.cost_usd is None and "cost_usd" not in call and price is not None \
                and record.error is None:
            record.cost_usd = price(record.model, record.input_tokens, record.cached_tokens,
                                    record.output_tokens)
        calls.append((int(call.get("call_index") or position), record))
    calls.sort(key=lambda item: item[0])
    details = judge.get("details")
    return AttemptRecord(
        attempt_uid=attempt_uid, run_id=run_id, generation=generation,
        task_index=int(data["task_index"]), attempt_index=int(data["attempt_index"]),
        k=int(data.get("k") or k), status=data.get("status") or "ok",
        success=judge.get("success"), score=judge.get("score"),
        prompt=actor.get("prompt"), output=actor.get("output"),
        raw_eval_output=judge.get("raw_eval_output"), judge_details=details,
        feedback=critic.get("feedback"), error=data.get("error"),
        started_at=started, finished_at=_time(data.get("finished_at"), started),
        calls=[record for _, record in calls])
