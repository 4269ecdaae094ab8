"""Where seqk keeps what it can always rebuild: $XDG_CACHE_HOME/seqk, else ~/.cache/seqk.

Four things live there: the template of a new database (seqk.store.template) and the tasks of
arcagi2's bundled splits (benchmarks/arcagi2/taskcache.py), each only to start a run sooner, the
figures reports have computed (seqk.analysis.memo, in figures/), so that a report asked again
computes only what its runs' rows changed, and the viewer's templates compiled (templates/,
seqk.view.render), so that no viewer's first page compiles them.
Each file's name holds a hash of everything that shaped it; a file that is missing, unreadable
or does not check out is rebuilt, and a folder that cannot be written only means nothing is kept.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path


def folder() -> Path | None:
    """seqk's cache folder (None when there is no home folder to put it in)."""
    try:
        root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    except RuntimeError:  # no home folder to find
        return None
    return root / "seqk"


def write_whole(target: Path, data: bytes | Path, stale: str | None = None) -> bool:
    """Write `target` under a private name and rename it into place, so a reader never sees it
    half-written; `data` is the bytes to write or a file to copy. With `stale` (a glob in the
    same folder), the files it matches other than `target` are removed: the cache keeps one
    version of a thing. False when the folder cannot be written (nothing is left behind)."""
    import shutil

    # private to this process and thread: two threads writing one target never share a part file
    part = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.part")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, Path):
            shutil.copyfile(data, part)
        else:
            part.write_bytes(data)
        os.replace(part, target)
    except OSError:
        with contextlib.suppress(OSError):
            part.unlink(missing_ok=True)
        return False
    if stale is not None:
        for old in target.parent.glob(stale):
            if old != target:
                with contextlib.suppress(OSError):
                    old.unlink()
    return True
