"""A feedback mode that shows the actor grading information is said so in plan, stored in
`runs`, and marked in the report with a footnote."""

from __future__ import annotations

import duckdb
from helpers import write_variant
from scripts import solves_on
from typer.testing import CliRunner

from seqk import models, store
from seqk.analysis import report
from seqk.cli import app

runner = CliRunner()
WARNING = "feedback mode hint shows grading information to the actor: results are not comparable with blind modes"


def _variant(tmp_path, mode: str, metric: str = "seq@k"):
    return write_variant(tmp_path, f"{mode}-{metric}.yaml", metric=metric, k=2, model="mock/actor",
                         options={"n": 3}, feedback_mode=mode)


def test_plan_warns_only_for_a_mode_that_shows_grading_information(tmp_path, db):
    models.register_mock("mock/actor", solves_on({}))
    leaky = runner.invoke(app, ["plan", str(_variant(tmp_path, "hint")), "--db", str(db)])
    blind = runner.invoke(app, ["plan", str(_variant(tmp_path, "binary")), "--db", str(db)])
    assert leaky.exit_code == blind.exit_code == 0
    assert WARNING in " ".join(leaky.output.split())
    assert "grading information" not in blind.output


def test_runs_store_the_flag_and_the_report_marks_and_footnotes_it(tmp_path, db):
    models.register_mock("mock/actor", solves_on({1: 2}))
    for mode in ("hint", "binary"):
        assert runner.invoke(app, ["run", str(_variant(tmp_path, mode)), "--db", str(db), "--no-export"]).exit_code == 0
    with duckdb.connect(str(db), read_only=True) as con:
        stored = dict(con.execute("SELECT feedback_mode, shows_grading_info FROM runs").fetchall())
    assert stored == {"hint": True, "binary": False}

    rep = report.report(db=db)
    _, body = report.cells(rep)
    marked = {row[0] for row in body if row[0].endswith(f" {report.GRADING_MARK}")}
    assert marked == {f"toy-plain/seqk/mock__actor/deterministic/hint {report.GRADING_MARK}"}
    assert f"{report.GRADING_MARK} {WARNING}." in rep.notes
    assert {r["run_id"]: r["shows_grading_info"] for r in report.flat_rows(rep)} == {
        "toy-plain/seqk/mock__actor/deterministic/hint": True,
        "toy-plain/seqk/mock__actor/deterministic/binary": False}


def test_compare_rows_mark_the_leaking_mode(tmp_path, db):
    models.register_mock("mock/actor", solves_on({1: 2}))
    for mode, metric in (("hint", "seq@k"), ("binary", "seq@k"), ("binary", "pass@k")):
        runner.invoke(app, ["run", str(_variant(tmp_path, mode, metric)), "--db", str(db), "--no-export"])
    rep = report.report(compare=True, db=db)
    assert sorted(row.feedback for row in rep.rows) == ["binary", f"hint {report.GRADING_MARK}"]
    text = report.to_markdown(rep)
    assert f"hint {report.GRADING_MARK}" in text and f"- {report.GRADING_MARK} {WARNING}." in text


def test_a_database_from_before_the_flag_gains_the_column_and_reads_it_as_unmarked(tmp_path, db):
    models.register_mock("mock/actor", solves_on({}))
    runner.invoke(app, ["run", str(_variant(tmp_path, "binary")), "--db", str(db), "--no-export"])
    with duckdb.connect(str(db)) as con:  # as schema 2 left it (schemas 3-8 undone first)
        con.execute("DROP TABLE endpoint_limits")  # migration 008
        con.execute("DROP VIEW runs")
        con.execute("DROP TABLE run_events")
        con.execute("DROP TABLE feedback_fills")
        for column in ("run_rows.chains", "attempts.chain_index", "calls.chain_index"):  # migration 007
            table, name = column.split(".")
            con.execute(f"ALTER TABLE {table} DROP COLUMN {name}")
        con.execute("ALTER TABLE run_rows RENAME TO runs")
        for column in ("runs.shows_grading_info", "runs.soft_score_clipped", "calls.cache_write_tokens",
                       "calls.price_tier"):  # added by migrations 003-005
            table, name = column.split(".")
            con.execute(f"ALTER TABLE {table} DROP COLUMN {name}")
        con.execute("DROP TABLE batch_items; DROP TABLE batches")
        con.execute("UPDATE schema_info SET value = '2' WHERE key = 'schema_version'")
    with store.connect(db) as con:
        assert con.execute("SELECT shows_grading_info FROM runs").fetchall() == [(None,)]
    rep = report.report(db=db)
    assert not any(r.shows_grading_info for r in rep.runs)
    assert not any(n.startswith(report.GRADING_MARK) for n in rep.notes)
