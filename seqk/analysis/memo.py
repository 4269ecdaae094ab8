"""Figures remembered between reports: what the estimators made of a run's chains (its curve's
bootstrap, its paired comparisons, its equal-budget blocks), kept in seqk's cache folder
(seqk.cache) under a hash of everything that shapes them.

Each figure already draws from its own seeded stream, named by the figure and its runs, so it is
a function of its inputs alone: the rows of the runs it reads (every array of their RunChains),
the settings it is asked with (errors' reading, seed, resamples, the block's unit), this code
(every source file of the estimators) and the numerical libraries' versions. The key is a hash of
all of them, so a figure remembered is the figure computed again, bit for bit
(tests/analysis/test_memo.py), and a run that gains one attempt, a re-judge, a new seed or an
edited estimator misses and computes afresh. A report over fifty runs after one more run finished
computes that run's figures only. A whole report (seqk/analysis/report.py, kind "report") is kept
the same way, its runs' part of the key their `run_fingerprints` and `run_digests` rows (sql/) instead
of their chains, so a report asked again reads no chain; and so is each run's rows, its chains,
spend and curve (seqk/analysis/inputs.py, kind "run-rows"), so a report after one more run reads
that run's rows from the store and no other's.

A file that is missing, unreadable, or whose header does not carry its whole key is computed
again; a folder that cannot be written only means nothing is kept. `SEQK_FIGURE_CACHE=0` turns it
off (the test suite does, so a test that changes an estimator's inside measures the change). A
process's first write prunes the folder to MAX_FILES figures and MAX_BYTES, the least recently used
going first (a figure read is touched), so it holds at most that and what one process adds.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import pickle
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from seqk import cache

T = TypeVar("T")

MAX_FILES = 4000
"""Figures kept at most; past it the least recently used are removed (a 1M-attempt report of 50
runs keeps 361: 210 figures, 150 runs' rows, 17 MB)."""
MAX_BYTES = 2 << 30
"""Bytes kept at most (the runs' rows of a 10M-attempt store of 50 runs take ~150 MB): past it the
least recently used are removed."""

_MAGIC = b"seqk-figure-1\n"
_ESTIMATORS = ("analysis", "stats.py", "power.py", "records.py")
"""What the figures are computed by, under seqk/: their source is part of every key."""
REPORT_SOURCES = _ESTIMATORS + ("store", "sql")
"""What a whole report is computed by: the estimators, the store's code and every SQL file (the
curves, spend and task sets a report reads are the SQL's), and DuckDB's version."""


def enabled() -> bool:
    """Whether figures are remembered (SEQK_FIGURE_CACHE unset, or anything but 0/false/no/off)."""
    return os.environ.get("SEQK_FIGURE_CACHE", "1").strip().lower() not in ("0", "false", "no", "off")


def _code(sources: tuple[str, ...]) -> bytes:
    root = Path(__file__).resolve().parents[1]
    h = hashlib.blake2b(digest_size=20)
    for name in sources:
        if name == "sql":
            _feed_sql(h)
            continue
        path = root / name
        for source in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            h.update(source.relative_to(root).as_posix().encode() + b"\0" + source.read_bytes() + b"\0")
    import scipy

    h.update(f"numpy {np.__version__} scipy {scipy.__version__} python {sys.version_info[:2]}".encode())
    return h.digest()


def _feed_sql(h: Any) -> None:
    """Every SQL file seqk runs (the package seqk.sql, its folders included), and DuckDB's version."""
    from importlib import resources

    import duckdb

    def walk(folder: Any, prefix: str) -> None:
        for entry in sorted(folder.iterdir(), key=lambda e: e.name):
            if entry.is_dir():
                walk(entry, f"{prefix}{entry.name}/")
            elif entry.name.endswith(".sql"):
                h.update(f"sql/{prefix}{entry.name}\0".encode() + entry.read_bytes() + b"\0")

    walk(resources.files("seqk.sql"), "")
    h.update(f"duckdb {duckdb.__version__}\0".encode())


_CODES: dict[tuple[str, ...], bytes] = {}
_LOCK = threading.Lock()
_PRUNED = False


def digest(*parts: Any) -> bytes:
    """A hash of the parts: numpy arrays by dtype, shape and bytes; dataclasses by their fields
    (a RunChains by its `fingerprint`); mappings, lists and tuples by their items; anything else
    by its type and repr."""
    h = hashlib.blake2b(digest_size=20)
    for part in parts:
        _feed(h, part)
    return h.digest()


def _feed(h: Any, part: Any) -> None:
    if isinstance(part, np.ndarray):
        array = np.ascontiguousarray(part)
        h.update(f"array {array.dtype.str} {array.shape}\0".encode())
        h.update(array.view(np.uint8).reshape(-1) if array.dtype != object else repr(array.tolist()).encode())
    elif hasattr(part, "fingerprint") and isinstance(part.fingerprint, bytes):
        h.update(b"fingerprint\0" + part.fingerprint)
    elif dataclasses.is_dataclass(part) and not isinstance(part, type):
        h.update(f"{type(part).__qualname__}(\0".encode())
        for f in dataclasses.fields(part):
            h.update(f.name.encode() + b"=")
            _feed(h, getattr(part, f.name))
        h.update(b")\0")
    elif isinstance(part, dict):
        h.update(b"{\0")
        for key in sorted(part, key=repr):
            _feed(h, key)
            _feed(h, part[key])
        h.update(b"}\0")
    elif isinstance(part, (list, tuple)):
        h.update(f"{type(part).__name__}[{len(part)}\0".encode())
        for item in part:
            _feed(h, item)
        h.update(b"]\0")
    else:
        h.update(f"{type(part).__name__}:{part!r}\0".encode())


def remembered(kind: str, parts: tuple[Any, ...] | Callable[[], tuple[Any, ...]], compute: Callable[[], T], *,
               sources: tuple[str, ...] = _ESTIMATORS) -> T:
    """compute()'s value, read from the cache folder when a figure of this `kind` was computed
    from the same `parts` by the same code (the files `sources` names under seqk/, "sql" for
    every SQL file), else computed and kept. `parts` may be a function giving them, called only
    when figures are remembered."""
    root = cache.folder()
    if not enabled() or root is None:
        return compute()
    if callable(parts):
        parts = parts()
    path, header = _place(root, kind, parts, sources)
    found = _read(path, header)
    if found is not _MISSING:
        return found
    value = compute()
    _write(path, header, value)
    return value


def remembered_each(kind: str, parts: dict[str, tuple[Any, ...]] | Callable[[], dict[str, tuple[Any, ...]]],
                    compute: Callable[[list[str]], dict[str, T]], names: Sequence[str], *,
                    sources: tuple[str, ...] = _ESTIMATORS, kept: Callable[[T], Any] | None = None,
                    loaded: Callable[[Any], T] | None = None) -> dict[str, T]:
    """`remembered` for many values at once, each kept under its own name's parts: those read
    from the cache folder, and compute(the names missed) for the rest, in one call (one query
    for every run that changed, say), each kept. `parts` (or the function giving them, called only
    when figures are remembered) holds every name's; compute may leave a name out (nothing to
    keep for it). `kept` turns a value into what is written, `loaded` what is read back into the
    value, each file as it is read (so that only one is held in both forms at a time)."""
    names = list(dict.fromkeys(names))
    root = cache.folder()
    if not enabled() or root is None or not names:
        return compute(names) if names else {}
    if callable(parts):
        parts = parts()
    places = {name: _place(root, kind, parts[name], sources) for name in names}
    found: dict[str, T] = {}
    for name, (path, header) in places.items():
        value = _read(path, header)
        if value is not _MISSING:
            found[name] = value if loaded is None else loaded(value)
    missed = [name for name in names if name not in found]
    if missed:
        computed = compute(missed)
        for name in missed:
            if name in computed:
                path, header = places[name]
                _write(path, header, computed[name] if kept is None else kept(computed[name]))
        found.update(computed)
    return {name: found[name] for name in names if name in found}


_MISSING = object()


def _place(root: Path, kind: str, parts: tuple[Any, ...], sources: tuple[str, ...]) -> tuple[Path, bytes]:
    """Where a value of `kind` computed from `parts` by `sources`' code is kept, and the header
    its file starts with (its whole key)."""
    code = _CODES.get(sources)
    if code is None:
        code = _CODES[sources] = _code(sources)
    key = digest(kind, code, *parts).hex()
    return root / "figures" / f"{kind}-{key}.pickle", _MAGIC + key.encode() + b"\n"


def _read(path: Path, header: bytes) -> Any:
    """The value kept at path under header, or _MISSING (missing, unreadable, truncated or
    another key's: computed again)."""
    with contextlib.suppress(Exception):
        data = path.read_bytes()
        if data.startswith(header):
            value = pickle.loads(memoryview(data)[len(header):])
            with contextlib.suppress(OSError):
                os.utime(path)  # recently used: the last to be pruned
            return value
    return _MISSING


def _write(path: Path, header: bytes, value: Any) -> None:
    if cache.write_whole(path, header + pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)):
        _prune(path.parent)


def _prune(folder: Path) -> None:
    """Once a process: keep the most recently used figures, at most MAX_FILES of them and
    MAX_BYTES in all."""
    global _PRUNED
    with _LOCK:
        if _PRUNED:
            return
        _PRUNED = True
    with contextlib.suppress(OSError):
        files = []
        for path in folder.glob("*.pickle"):
            with contextlib.suppress(OSError):
                stat = path.stat()
                files.append((stat.st_mtime, stat.st_size, path))
        files.sort(key=lambda f: f[0], reverse=True)  # the most recently used first
        total = 0
        for i, (_, size, path) in enumerate(files):
            total += size
            if i >= MAX_FILES or total > MAX_BYTES:
                with contextlib.suppress(OSError):
                    path.unlink()
