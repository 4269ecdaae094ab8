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
of their chains, so a report asked again reads no chain.

A file that is missing, unreadable, or whose header does not carry its whole key is computed
again; a folder that cannot be written only means nothing is kept. `SEQK_FIGURE_CACHE=0` turns it
off (the test suite does, so a test that changes an estimator's inside measures the change). A
process's first write prunes the folder to MAX_FILES figures, the least recently used going first
(a figure read is touched), so it holds at most MAX_FILES and what one process adds.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import pickle
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from seqk import cache

T = TypeVar("T")

MAX_FILES = 4000
"""Figures kept at most; past it the least recently used are removed (a 1M-attempt report of 50
runs keeps 160, a few MB)."""

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
    code = _CODES.get(sources)
    if code is None:
        code = _CODES[sources] = _code(sources)
    key = digest(kind, code, *parts).hex()
    path = root / "figures" / f"{kind}-{key}.pickle"
    header = _MAGIC + key.encode() + b"\n"
    with contextlib.suppress(Exception):  # missing, unreadable, truncated or another key's: compute
        data = path.read_bytes()
        if data.startswith(header):
            value = pickle.loads(data[len(header):])
            with contextlib.suppress(OSError):
                os.utime(path)  # recently used: the last to be pruned
            return value
    value = compute()
    if cache.write_whole(path, header + pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)):
        _prune(path.parent)
    return value


def _prune(folder: Path) -> None:
    """Once a process: keep the MAX_FILES most recently used figures."""
    global _PRUNED
    with _LOCK:
        if _PRUNED:
            return
        _PRUNED = True
    with contextlib.suppress(OSError):
        files = list(folder.glob("*.pickle"))
        if len(files) <= MAX_FILES:
            return
        by_age = sorted(files, key=lambda p: p.stat().st_mtime)
        for old in by_age[:len(files) - MAX_FILES]:
            with contextlib.suppress(OSError):
                old.unlink()
