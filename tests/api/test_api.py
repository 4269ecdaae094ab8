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
    code = ("import sys, seqk; print(sorted(m for m in ('duckdb', 'litellm', 'boto3', 'seqk.run.engine') "
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
        if name[0].islower() and name not in ("__version__", "load_variant", "load_study"):
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


def test_the_result_says_what_the_run_holds_as_well_as_what_this_invocation_did(tmp_path, db):
    models.register_mock("mock/actor", solves_on({1: 1, 2: 2}))
    variant = write_variant(tmp_path, metric="seq@k", k=2, model="mock/actor", options={"n": 3})
    first = seqk.run_variant(variant, db, export=False).result
    assert (first.tasks_passed, first.run.tasks_passed, first.run.tasks, first.run.tasks_pending) == (2, 2, 3, 0)
    again = seqk.run_variant(variant, db, export=False).result  # a resume: nothing left to run
    assert (again.tasks_passed, again.attempts_written) == (0, 0)
    assert (again.run.tasks_passed, again.run.tasks_finished, again.run.attempts, again.run.cost_usd) == (2, 3, 5, 0.0)
    shown = repr(again)
    assert "run: 3 tasks: 2 passed, 3 finished, 0 pending; 5 attempts, 0 errored; $0.0000" in shown
    assert "this invocation (resume): 0 attempts written, 0 tasks passed" in shown
    assert len(repr(seqk.run_variant(variant, db, export=False))) < 400  # not the spec's every field


def test_a_report_shows_itself_in_a_notebook_and_turns_into_text_and_a_frame(tmp_path, db):
    from seqk.render.text import to_text

    models.register_mock("mock/actor", solves_on({1: 1, 2: 2}))
    for metric in ("seq@k", "pass@k"):
        seqk.run_variant(write_variant(tmp_path, f"{metric[:3]}.yaml", metric=metric, k=2, model="mock/actor",
                                       options={"n": 3}), db, export=False)
    rep = seqk.report((), db, compare=True)
    assert rep.to_text() == to_text(rep) and repr(rep) == rep.to_text()
    page = rep._repr_html_()
    assert page.startswith("<div class='seqk-report'><table><thead><tr><th>benchmark</th>")
    assert "<td>mock/actor</td>" in page and "notes: what each figure is</summary>" in page
    assert "<td>seq 0.67 [0.21, 0.94]<br>pass 0.33 [0.06, 0.79]</td>" in page  # @2: seq over pass
    frame = rep.to_polars()
    assert frame.height == 1 and frame["seq_run_id"][0] == "toy-plain/seqk/mock__actor/deterministic/binary"
    assert frame["seq_value_at_2"][0] == 2 / 3 and frame["pass_value_at_2"][0] == 1 / 3
    assert abs(frame["seq_lift"][0] - 1 / 3) < 1e-12 and frame["seq_lift_p"][0] is not None


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
