"""A notebook runs a variant with one call and gets a typed result back."""

from __future__ import annotations

import subprocess
import sys

from helpers import write_variant
from scripts import solves_on

import seqk
from seqk import models, store


def test_run_variant_runs_exports_and_returns_what_it_did(tmp_path, db):
    models.register_mock("mock/actor", solves_on({1: 1, 2: 2}))
    variant = write_variant(tmp_path, metric="seq@k", k=2, model="mock/actor", options={"n": 3})
    outcome = seqk.run_variant(variant, db=db)
    assert outcome.spec.run_id == "toy-plain/seqk/mock__actor/deterministic/binary"
    assert (outcome.result.tasks_passed, outcome.result.tasks_failed) == (2, 1)
    assert outcome.result.attempts_written == 5 and outcome.db == store.open(db) and str(outcome.db) == str(db)
    assert outcome.messages and outcome.messages[0].startswith(f"exported {outcome.spec.run_id}")
    assert (db.parent / outcome.spec.run_id / "task-1" / "attempt-1.json").is_file()
    again = seqk.run_variant(variant, db=db, export=False)
    assert again.result.attempts_written == 0 and again.messages == []


def test_importing_seqk_stays_cheap():
    code = ("import sys, seqk; print(sorted(m for m in ('duckdb', 'litellm', 'boto3', 'seqk.run.scheduler') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_public_surface_reads_back_what_a_run_wrote_with_db_second(tmp_path, db):
    import inspect as pyinspect

    models.register_mock("mock/actor", solves_on({1: 1, 2: 2}))
    spec = seqk.run_variant(write_variant(tmp_path, metric="seq@k", k=2, model="mock/actor", options={"n": 3}),
                            db, export=False).spec
    two_runs = {"compare"}  # acts on two runs: db comes after both
    for name in seqk.__all__:
        if name[0].islower() and name != "__version__" and name != "load_variant":
            params = list(pyinspect.signature(getattr(seqk, name)).parameters)
            assert params[2 if name in two_runs else 1] == "db", (name, params)
    [row] = seqk.status((), db)
    assert (row["run_id"], row["n_passed"], row["n_valid_attempts"], row["batches"]) == (spec.run_id, 2, 5, [])
    story = seqk.inspect(spec.run_id, db, task_index=2)
    assert [a["success"] for a in story.attempts] == [False, True]
    assert story.attempts[1]["calls"][0]["role"] == "actor" and story.run["chains"] == 1
    columns, rows = seqk.query("SELECT count(*) AS n FROM attempts", db)
    assert (columns, rows) == (["n"], [(5,)])
    assert seqk.report((), db).runs[0].run_id == spec.run_id
    [done] = seqk.export_runs((), db, to=tmp_path / "out")
    assert (tmp_path / "out" / spec.run_id / "summary.json").is_file() and done.run_id == spec.run_id
    assert seqk.export_parquet((), db, to=tmp_path / "pq")["attempts"] == 5


def test_run_sweep_runs_every_cell_and_a_refused_cell_stops_no_other(tmp_path, db):
    import yaml

    models.register_mock("mock/actor", solves_on({1: 1, 2: 2}))
    write_variant(tmp_path, "base.yaml", metric="seq@k", k=2, model="mock/actor", options={"n": 3})
    # the binary cell's run exists already with another temperature: resuming it would mix them
    seqk.run_variant(write_variant(tmp_path, "hot.yaml", metric="seq@k", k=2, model="mock/actor",
                                   temperature=1.5, options={"n": 3}), db, export=False)
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(yaml.safe_dump({"base": "variants/toy/base.yaml", "partners": True,
                                     "matrix": {"feedback_mode": ["binary", "hint"]}}))
    seen = []
    outcome = seqk.run_sweep(sweep, db, export=False, on_cell=lambda done: seen.append(done.cell.name))
    assert seen == ["feedback_mode=binary", "feedback_mode=hint", "pass@k partner: (the base)"]
    statuses = {c.cell.spec.run_id: c.status for c in outcome.cells}
    assert statuses == {"toy-plain/seqk/mock__actor/deterministic/binary": 2,
                        "toy-plain/seqk/mock__actor/deterministic/hint": 0,
                        "toy-plain/passk/mock__actor/deterministic/binary": 0}
    assert "temperature" in outcome.cells[0].output and not outcome.interrupted
    assert outcome.cells[1].run is not None and outcome.cells[1].run.result.tasks_passed == 2
