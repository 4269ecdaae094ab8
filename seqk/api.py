"""What the command line and notebooks call: one function per thing a user does.

    from seqk import run_variant
    outcome = run_variant("variants/quickstart/seqk.yaml", db="runs/seqk.duckdb")
    outcome.result.tasks_passed, outcome.spec.run_id

The library never prints: progress comes through callbacks, and what the run's export
and upload did comes back as lines in the outcome.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seqk.config.spec import RunSpec
from seqk.errors import UploadError


@dataclass
class VariantRun:
    """What one `run_variant` did."""

    spec: RunSpec
    result: Any
    """seqk.run.scheduler.RunResult: counts, errors, whether it was interrupted or stopped."""
    db: str | Path
    """The database: a DuckDB file, or a lake URL."""
    messages: list[str] = field(default_factory=list)
    """What the export and upload at the end did, one line each."""
    upload_error: Exception | None = None
    """seqk.errors.UploadError when the upload at the end failed: the run and its export are
    intact, and the message names the command that retries the upload."""


def load_variant(variant: str | os.PathLike[str], overrides: dict[str, Any] | None = None) -> RunSpec:
    """Validate a variant YAML against its benchmark (ConfigError lists every problem)."""
    from seqk.config import spec as runspec

    return runspec.load(Path(variant), overrides or {})


def run_variant(variant: str | os.PathLike[str] | RunSpec, db: str | os.PathLike[str] | None = None, *,
                overrides: dict[str, Any] | None = None, export: bool = True, upload: bool = True,
                on_event: Callable[[Any], None] | None = None,
                on_prepared: Callable[[Any], None] | None = None,
                on_interrupt: Callable[[], None] | None = None, no_wait: bool = False,
                on_batch: Callable[[Any], None] | None = None) -> VariantRun:
    """Run (or resume) one variant, then export its folder tree and upload it when S3 sync is on.

    `db` defaults to the variant's `db:`, then $SEQK_DB, then runs/seqk.duckdb. An interrupted
    run (Ctrl-C, SIGTERM) is neither exported nor uploaded; the same call resumes it.

    A variant with `batch: true` runs in rounds of provider batches (seqk.run.rounds); `on_batch`
    gets the batches whenever one changes; `no_wait` returns once a round is sent (the result's
    `deferred` counts the batches in flight) and a later call collects it.
    """
    from seqk import store
    from seqk.io import publish
    from seqk.run import scheduler as engine

    spec = variant if isinstance(variant, RunSpec) else load_variant(variant, overrides)
    db_path = store.resolve(db if db is not None else spec.db)
    publish.preflight(spec, no_upload=not upload, no_export=not export, db=db_path)
    if spec.batched:
        from seqk.run import rounds

        result = rounds.run(spec, db_path, no_wait=no_wait, on_batch=on_batch, on_event=on_event,
                            on_prepared=on_prepared, on_interrupt=on_interrupt)
    else:
        result = engine.run(spec, db_path, on_event=on_event, on_prepared=on_prepared,
                            on_interrupt=on_interrupt)
    outcome = VariantRun(spec, result, db_path)
    if not result.interrupted and not getattr(result, "deferred", 0):
        try:
            publish.after_run(spec, db_path, no_export=not export, no_upload=not upload,
                                report=outcome.messages.append)
        except UploadError as exc:
            outcome.upload_error = exc
    return outcome
