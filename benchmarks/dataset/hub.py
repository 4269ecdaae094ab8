"""A Hugging Face dataset's files for one subset and split, from huggingface_hub's local cache
only: seqk never downloads a data set while it runs (offline machines, and a run must not depend
on what the hub serves that day). A dataset not in the cache is one line naming it and the
command that fetches it.

The files of a split are found by the hub's own layout conventions, in this order of parts of
the path: `<subset>/<split>-*.parquet`, `data/<split>-*`, `<subset>/<split>/*`, `<split>.jsonl`...
(any of .parquet, .jsonl, .json, .csv); shards are read in name order, rows numbered across them.
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.dataset.files import FORMATS
from seqk.errors import ConfigError, ConfigIssue


def _issue(field: str, message: str) -> ConfigError:
    return ConfigError("options", [ConfigIssue("C08", f"options.{field}", message)])


def fetch_command(repo_id: str, revision: str | None) -> str:
    """The command that puts the dataset in huggingface_hub's cache, where there is a network."""
    return f"hf download {repo_id} --repo-type dataset" + (f" --revision {revision}" if revision else "")


def snapshot(repo_id: str, revision: str | None) -> Path:
    """The cached snapshot folder of `repo_id` (at `revision`, else the cached main)."""
    try:
        from huggingface_hub import constants, snapshot_download
    except ImportError:
        raise _issue("hf", f"reading {repo_id} from the Hugging Face cache needs huggingface_hub: "
                           "pip install 'seqk[hub]'") from None
    try:
        return Path(snapshot_download(repo_id, repo_type="dataset", revision=revision, local_files_only=True))
    except Exception:  # noqa: BLE001 - not cached, a revision not cached: the same answer
        at = f" at revision {revision}" if revision else ""
        raise _issue("hf", f"the dataset {repo_id}{at} is not in huggingface_hub's cache "
                           f"({constants.HF_HUB_CACHE}), and seqk reads only the cache: fetch it with "
                           f"`{fetch_command(repo_id, revision)}` where there is a network") from None


def _matches_split(parts: tuple[str, ...], split: str) -> bool:
    stem = Path(parts[-1]).stem
    name_match = stem == split or stem.startswith((f"{split}-", f"{split}_", f"{split}."))
    return name_match or split in parts[:-1]


def split_files(repo_id: str, split: str, subset: str | None, revision: str | None) -> list[Path]:
    """The cached data files of `subset`/`split`, in name order; ConfigError saying what the
    cache holds when none, or several subsets, match."""
    root = snapshot(repo_id, revision)
    data = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in FORMATS)
    found = [p for p in data if _matches_split(p.relative_to(root).parts, split)
             and (subset is None or subset in p.relative_to(root).parts[:-1])]
    listing = ", ".join(str(p.relative_to(root)) for p in data[:12]) + (" ..." if len(data) > 12 else "")
    if not found:
        which = f"split {split!r}" + (f" of subset {subset!r}" if subset else "")
        raise _issue("split", f"no file of {which} in the cached {repo_id} ({root}); its data files: "
                              f"{listing or 'none'}")
    folders = sorted({str(p.parent.relative_to(root)) for p in found})
    if len(folders) > 1:
        raise _issue("subset", f"{repo_id} has split {split!r} in several subsets ({', '.join(folders)}): "
                               "name one with options.subset (a folder of it)")
    suffixes = {p.suffix.lower() for p in found}
    if len(suffixes) > 1:
        raise _issue("split", f"split {split!r} of {repo_id} comes in several formats "
                              f"({', '.join(sorted(suffixes))}); seqk will not guess which to read")
    return found
