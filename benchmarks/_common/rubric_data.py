"""Where a rubric benchmark's data comes from: a local file in the dataset's own schema
(`options.data_path`), or the Hugging Face Hub at a pinned revision through the hub's own
cache. Either way the file's bytes are hashed once: the hash joins the run's fingerprint,
so two data sets never mix in one run.

`huggingface_hub` is imported only when a file has to come from the hub (`pip install
'seqk[hub]'`); without it, or offline (checked at once: one connect to the hub; a file already
in the hub's cache is used), validation fails with a message naming `data_path`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from benchmarks._common.records import Records
from seqk.errors import ConfigError, ConfigIssue

_FIELD = "options.data_path"


@dataclass(frozen=True)
class HubFile:
    """A file of a Hugging Face dataset repository, pinned to one commit."""

    repo_id: str
    filename: str
    revision: str
    """A commit hash, so canonical indices cannot shift under a moving branch."""


class DataOptions(BaseModel):
    """The options every rubric benchmark shares: where its data comes from."""

    model_config = ConfigDict(extra="forbid")

    data_path: str | None = None
    """A local copy of the data file, in the dataset's own schema; without it the file is
    downloaded from the Hugging Face Hub (needs `huggingface_hub` and a network)."""
    revision: str | None = None
    """Hub commit to download instead of the pinned default; the content hash, not this
    name, is what the run's fingerprint holds."""
    skip_invalid_records: bool = False
    """Skip a record that does not parse or does not fit the schema (a warning lists the
    lines) instead of stopping with an error naming it. The other records keep their
    task_index either way: it is the record's position in the file."""


@dataclass(frozen=True)
class DataFile:
    """The bytes of a data file, where they came from, and their sha256."""

    source: str
    sha256: str
    text: str


def data_file(options: DataOptions, hub: HubFile | None) -> DataFile:
    """Read `options.data_path`, else download `hub` (at `options.revision` if given).

    Raises ConfigError naming `options.data_path` when neither works.
    """
    if options.data_path is not None:
        path = Path(options.data_path).expanduser()
        if not path.is_file():
            raise _issue(f"no file at {path}")
        return _read(str(path.resolve()), path.stat().st_mtime_ns, path.stat().st_size)
    if hub is None:
        raise _issue("required: this benchmark has no public download; give a local file")
    path = _download(hub, options.revision or hub.revision)
    return _read(str(path), path.stat().st_mtime_ns, path.stat().st_size)


def _issue(message: str) -> ConfigError:
    return ConfigError("options", [ConfigIssue("C08", _FIELD, message)])


def _download(hub: HubFile, revision: str) -> Path:
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        raise _issue(f"{hub.filename} comes from the Hugging Face dataset {hub.repo_id}, and "
                     f"huggingface_hub is not installed: pip install 'seqk[hub]', or download the "
                     f"file and set data_path to it") from None
    from huggingface_hub import constants

    unreachable = None if constants.HF_HUB_OFFLINE else _unreachable(constants.ENDPOINT)
    try:
        # Offline, the hub's cache may still hold the file: use it rather than fail.
        return Path(hf_hub_download(repo_id=hub.repo_id, filename=hub.filename, repo_type="dataset",
                                    revision=revision,
                                    local_files_only=constants.HF_HUB_OFFLINE or unreachable is not None))
    except Exception as exc:  # noqa: BLE001 - offline, gated, missing: all mean "give a local file"
        if unreachable is not None or constants.HF_HUB_OFFLINE:
            why = unreachable or "HF_HUB_OFFLINE is set"
            raise _issue(f"{hub.filename} of the Hugging Face dataset {hub.repo_id} is not in the hub's "
                         f"cache and the hub cannot be reached ({why}); download the file where there is "
                         f"a network and set data_path to the local file") from None
        raise _issue(f"could not fetch {hub.filename} from the Hugging Face dataset {hub.repo_id} "
                     f"at revision {revision} ({type(exc).__name__}: {str(exc)[:200]}); download "
                     f"it and set data_path to the local file") from None


def _unreachable(endpoint: str, timeout_s: float = 3.0) -> str | None:
    """Why the hub at `endpoint` cannot be reached (no DNS, no route, refused), or None.

    One DNS lookup and TCP connect: without it, huggingface_hub retries with backoff for
    about 24 s before it gives up on a machine with no network.
    """
    import socket
    from urllib.parse import urlsplit

    url = urlsplit(endpoint)
    host = url.hostname or ""
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return None
    except OSError as exc:
        return f"{host}:{port}: {exc.strerror or type(exc).__name__}"


@lru_cache(maxsize=8)
def _read(path: str, mtime_ns: int, size: int) -> DataFile:
    # Keyed on mtime and size too: a file rewritten in place is read and hashed again.
    raw = Path(path).read_bytes()
    return DataFile(path, hashlib.sha256(raw).hexdigest(), raw.decode("utf-8-sig"))


def records(data: DataFile, options: DataOptions) -> Records:
    """The file's records (CSV when its name ends in .csv, else JSONL), under the options'
    rule for a record that does not fit."""
    return Records(data.source, data.text, is_csv=data.source.lower().endswith(".csv"),
                   skip_invalid=options.skip_invalid_records)


def decoded(value: Any) -> Any:
    """A CSV cell or JSONL field that may hold JSON text, decoded when it does."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("[", "{", '"'):
            try:
                return json.loads(text)
            except ValueError:
                return value
    return value


def short_hash(values: list[str]) -> str:
    """First 6 hex digits of SHA-1 of the sorted values joined by ',' (a slice-name suffix)."""
    return hashlib.sha1(",".join(sorted(values)).encode("utf-8")).hexdigest()[:6]
