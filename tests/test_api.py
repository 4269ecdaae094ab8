"""A notebook runs a variant with one call and gets a typed result back."""

from __future__ import annotations

import subprocess
import sys

from helpers import write_variant
from scripts import solves_on

import seqk
from seqk import models


def test_run_variant_runs_exports_and_returns_what_it_did(tmp_path, db):
    models.register_mock("mock/actor", solves_on({1: 1, 2: 2}))
    variant = write_variant(tmp_path, metric="seq@k", k=2, model="mock/actor", options={"n": 3})
    outcome = seqk.run_variant(variant, db=db)
    assert outcome.spec.run_id == "toy-plain/seqk/mock__actor/deterministic/binary"
    assert (outcome.result.tasks_passed, outcome.result.tasks_failed) == (2, 1)
    assert outcome.result.attempts_written == 5 and outcome.db == db
    assert outcome.messages and outcome.messages[0].startswith(f"exported {outcome.spec.run_id}")
    assert (db.parent / outcome.spec.run_id / "task-1" / "attempt-1.json").is_file()
    again = seqk.run_variant(variant, db=db, export=False)
    assert again.result.attempts_written == 0 and again.messages == []


def test_importing_seqk_stays_cheap():
    code = ("import sys, seqk; print(sorted(m for m in ('duckdb', 'litellm', 'boto3', 'seqk.run.scheduler') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
