"""Sequential studies (seqk.api re-exports these): validate a study file, run it until its
anytime-valid confidence sequence decides, or plan it (seqk.run.study, docs/studies.md)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from seqk.errors import UploadError

if TYPE_CHECKING:
    from seqk.config.study import StudySpec
    from seqk.run.study_plan import StudyPlan
    from seqk.run.study_record import StudyObserver, StudyResult
    from seqk.store import Database
    from seqk.store.database import DbLike


@dataclass
class StudyRun:
    """What one `run_study` did."""

    spec: StudySpec
    result: StudyResult
    """The study's looks, decision and stop reason (`result.to_json()` is `seqk study --format json`)."""
    db: Database
    messages: list[str] = field(default_factory=list)
    """What the arms' export and upload did, one line each, once the study stopped."""
    upload_error: Exception | None = None
    """seqk.errors.UploadError when an upload failed (the runs and their exports are intact)."""


def load_study(study: str | os.PathLike[str]) -> StudySpec:
    """Validate a study file and both of its arms' variants (ConfigError lists every problem)."""
    from seqk.config.study import load

    return load(study)


def run_study(study: str | os.PathLike[str] | StudySpec, db: DbLike = None, *, observer: StudyObserver | None = None,
              export: bool = True, upload: bool = True) -> StudyRun:
    """Run (or resume) a sequential study: both arms a window of tasks at a time, in the study's
    seeded order, until its anytime-valid confidence sequence decides, or the tasks, the budget
    or the errors stop it (seqk.run.study). `db` defaults to the seq arm's `db:`, then $SEQK_DB.
    Once the study has stopped, each arm's run is exported and uploaded as `run_variant` does."""
    from seqk import store
    from seqk.config.study import StudySpec, load
    from seqk.io import publish
    from seqk.run.study import run

    spec = study if isinstance(study, StudySpec) else load(study)
    database = store.open(spec.settings.database(db))
    arms = ((spec.seq, spec.settings), (spec.partner, spec.partner_settings))
    for arm, settings in arms:
        publish.preflight(arm, settings, database, no_upload=not upload, no_export=not export)
    result = run(spec, database, observer)
    outcome = StudyRun(spec, result, database)
    if result.stop_reason is not None and not result.interrupted and result.error is None:
        for arm, settings in arms:
            try:
                publish.after_run(arm, settings, database, no_export=not export, no_upload=not upload,
                                  report=outcome.messages.append)
            except UploadError as exc:
                outcome.upload_error = exc
    return outcome


def plan_study(study: str | os.PathLike[str] | StudySpec, db: DbLike = None, *, lift: float | None = None,
               replicates: int = 2000) -> StudyPlan:
    """What `seqk plan study.yaml` prints: the expected tasks and US$ to a decision for a lift of D
    (simulated from the study's own rule), beside the fixed-n figures."""
    from seqk import store
    from seqk.config.study import StudySpec, load
    from seqk.run.study_plan import plan

    spec = study if isinstance(study, StudySpec) else load(study)
    return plan(spec, store.open(spec.settings.database(db)), lift=lift, replicates=replicates)
