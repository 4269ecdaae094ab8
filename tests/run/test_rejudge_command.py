"""`seqk rejudge` grades a pass@k run's stored answers with another judge, calls no actor, is
resumable, refuses seq@k (but allows its first attempts), and `seqk judges` compares
the two judges on identical answers."""

from __future__ import annotations

import pytest
from helpers import rows, write_variant
from typer.testing import CliRunner

from seqk import models
from seqk.analysis import judges
from seqk.cli import app
from seqk.render.judges import judge_lines

runner = CliRunner()
SOURCE = "toyjudge-plain/passk/mock__py:scripts:odd_tasks_right/mock__judge1/binary"
REJUDGED = ("toyjudge-plain/passk/mock__py:scripts:odd_tasks_right/mock__judge2.rejudge.mock__judge1/"
            "binary")




def judge1(prompt: str) -> str:
    """Right: YES when the answer is the word asked for."""
    answer, word = prompt.split("'")[1], prompt.split("the word ")[1].split("?")[0]
    return "YES" if answer == word else "NO"


def judge2(prompt: str) -> str:
    """Also passes task 4's wrong answer."""
    return "YES" if judge1(prompt) == "YES" or "word w4?" in prompt else "NO"


@pytest.fixture
def source_run(tmp_path, db):
    models.register_mock("mock/judge1", judge1)
    variant = write_variant(tmp_path, benchmark="toyjudge", metric="pass@k", k=3,
                            model="mock/py:scripts:odd_tasks_right", judge_model="mock/judge1",
                            options={"n": 4})
    result = runner.invoke(app, ["run", str(variant), "--db", str(db), "--no-export"])
    assert result.exit_code == 0, result.output
    return variant


def test_rejudging_calls_no_actor_links_the_answers_and_compares_the_judges(source_run, db):
    actor_calls_before = rows(db, "SELECT count(*) FROM calls WHERE role = 'actor'")
    models.register_mock("mock/judge2", judge2)
    result = runner.invoke(app, ["rejudge", SOURCE, "--judge-model", "mock/judge2", "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert rows(db, "SELECT count(*) FROM calls WHERE role = 'actor'") == actor_calls_before
    assert rows(db, "SELECT role, count(*) FROM calls WHERE run_id = ? GROUP BY role", [REJUDGED]) == [
        ("judge", 12)]
    # Same answers, by reference: each slot names the source attempt whose output it copies.
    linked = rows(db, """SELECT count(*) FROM rejudged_slots l
                         JOIN attempts s ON s.attempt_uid = l.source_attempt_uid
                         JOIN attempts a ON a.run_id = l.run_id AND a.task_index = l.task_index
                                        AND a.attempt_index = l.attempt_index
                         WHERE l.run_id = ? AND s.run_id = ? AND a.output = s.output""",
                  [REJUDGED, SOURCE])
    assert linked == [(12,)]
    assert rows(db, "SELECT judge_model, metric, k FROM runs WHERE run_id = ?", [REJUDGED]) == [
        ("mock/judge2", "pass@k", 3)]
    # judge1 passes tasks 1 and 3, judge2 tasks 1, 3 and 4: 9 of 12 agree, kappa 0.5.
    c = judges.compare_judges(SOURCE, REJUDGED, db)
    assert (c.n, c.both_pass, c.a_only, c.b_only, c.both_fail) == (12, 6, 0, 3, 3)
    assert c.agreement == 0.75 and c.kappa == pytest.approx(0.5)
    assert "answers both judged: 12; agreement 75.0%; Cohen's kappa 0.500" in result.output
    report = runner.invoke(app, ["judges", REJUDGED, "--db", str(db)])
    assert report.exit_code == 0, report.output
    assert "flips: 0 passed by A only, 3 passed by B only" in report.output
    assert f"A = mock/judge1 ({SOURCE}) vs B = mock/judge2 ({REJUDGED})" in report.output


def test_a_rejudging_run_resumes_the_verdicts_it_lacks(source_run, db):
    failing = {"on": True}

    def flaky(prompt: str) -> str:
        if failing["on"] and "word w2?" in prompt:
            return "MAYBE"  # not a verdict: a judge error, kept apart and retried by the next run
        return judge2(prompt)

    judge = models.register_mock("mock/judge2", flaky)
    command = ["rejudge", SOURCE, "--judge-model", "mock/judge2", "--db", str(db)]
    runner.invoke(app, command)
    assert rows(db, "SELECT count(*) FROM attempts WHERE run_id = ? AND status = 'error'", [REJUDGED]) == [(3,)]
    calls_first = judge.calls
    failing["on"] = False
    again = runner.invoke(app, command)
    assert again.exit_code == 0, again.output
    assert judge.calls - calls_first == 3  # only the three errored slots
    assert rows(db, "SELECT count(*) FROM current_attempts WHERE run_id = ? AND status = 'ok'",
                [REJUDGED]) == [(12,)]


def test_seq_at_k_is_refused_but_its_first_attempts_can_be_rejudged(tmp_path, db):
    models.register_mock("mock/judge1", judge1)
    models.register_mock("mock/judge2", judge2)
    variant = write_variant(tmp_path, benchmark="toyjudge", metric="seq@k", k=3,
                            model="mock/py:scripts:odd_tasks_right", judge_model="mock/judge1",
                            options={"n": 4})
    assert runner.invoke(app, ["run", str(variant), "--db", str(db), "--no-export"]).exit_code == 0
    source = "toyjudge-plain/seqk/mock__py:scripts:odd_tasks_right/mock__judge1/binary"
    refused = runner.invoke(app, ["rejudge", source, "--judge-model", "mock/judge2", "--db", str(db)])
    assert refused.exit_code == 2
    assert "is a seq@k run: another judge's verdicts would move where each task stopped" in refused.output
    first = runner.invoke(app, ["rejudge", source, "--judge-model", "mock/judge2", "--first-attempt-only",
                                "--db", str(db)])
    assert first.exit_code == 0, first.output
    new = source.replace("/mock__judge1/", "/mock__judge2.rejudge1.mock__judge1/")
    assert rows(db, "SELECT k FROM runs WHERE run_id = ?", [new]) == [(1,)]
    assert rows(db, "SELECT DISTINCT attempt_index FROM attempts WHERE run_id = ?", [new]) == [(1,)]
    assert "answers both judged: 4; agreement 75.0%" in first.output


def test_a_non_llm_verifier_takes_no_judge_model(tmp_path, db):
    variant = write_variant(tmp_path, metric="pass@k", k=1, model="mock/py:scripts:odd_tasks_right",
                            options={"n": 2})
    runner.invoke(app, ["run", str(variant), "--db", str(db), "--no-export"])
    source = "toy-plain/passk/mock__py:scripts:odd_tasks_right/deterministic/binary"
    wrong = runner.invoke(app, ["rejudge", source, "--judge-model", "mock/j", "--db", str(db)])
    assert wrong.exit_code == 2 and "re-judge without --judge-model" in wrong.output
    again = runner.invoke(app, ["rejudge", source, "--db", str(db)])
    assert again.exit_code == 0, again.output
    assert "agreement 100.0%" in again.output


@pytest.mark.slow  # three runs and a rejudge (~2.5 s of CPU)
def test_a_rejudging_run_never_becomes_a_seq_runs_partner_and_says_what_it_is(tmp_path, db):
    from seqk.analysis import report
    from seqk.render import text as report_text

    models.register_mock("mock/a", lambda p: "nope")
    for metric in ("pass@k", "seq@k"):
        variant = write_variant(tmp_path, f"{metric[:-2]}.yaml", benchmark="toy", metric=metric, k=2,
                                model="mock/a", options={"n": 3})
        assert runner.invoke(app, ["run", str(variant), "--db", str(db), "--no-export"]).exit_code == 0
    source = "toy-plain/passk/mock__a/deterministic/binary"
    result = runner.invoke(app, ["rejudge", source, "--db", str(db)])
    assert result.exit_code == 0, result.output
    rejudging = rows(db, "SELECT run_id FROM runs WHERE config->>'rejudge_of' IS NOT NULL")[0][0]
    assert rejudging < source  # it sorts first: before the fix, every seq@k run paired with it
    rep = report.report(db=db)
    seq = next(r for r in rep.runs if r.metric == "seq@k")
    assert seq.pass_run_id == source and seq.n_pass_candidates == 1
    text = report_text.to_text(rep)
    assert f"{rejudging}\n  re-judge of {source} by deterministic\n" in text
    compare = report_text.to_text(report.report(compare=True, db=db))
    assert f"pass {rejudging}\n       re-judge of {source} by deterministic" in compare
    # Asked for by name, the pair is compared.
    asked = report.report([seq.run_id, rejudging], db=db)
    assert asked.comparison is not None and {asked.comparison.a_run_id, asked.comparison.b_run_id} == {
        seq.run_id, rejudging}


def test_judges_takes_globs_and_prefixes(source_run, db):
    models.register_mock("mock/judge2", judge2)
    assert runner.invoke(app, ["rejudge", SOURCE, "--judge-model", "mock/judge2", "--db", str(db)]).exit_code == 0
    by_glob = runner.invoke(app, ["judges", "*judge2.rejudge*", "--db", str(db)])
    assert by_glob.exit_code == 0, by_glob.output
    assert f"vs B = mock/judge2 ({REJUDGED})" in by_glob.output
    two = runner.invoke(app, ["judges", "toyjudge-plain/passk/*/mock__judge1/binary", "*judge2*",
                              "--db", str(db)])
    assert two.exit_code == 0 and "answers both judged: 12" in two.output
    many = runner.invoke(app, ["judges", "toyjudge-plain", "--db", str(db)])
    assert many.exit_code == 2 and "matches 2 runs; name one" in many.output


def test_a_kappa_of_zero_never_prints_as_negative():
    c = judges.JudgeComparison("a", "b", "j1", "j2", 3, 0, 0, 1, 2)  # kappa 0, less a rounding error
    assert -1e-9 < c.kappa < 0
    assert "Cohen's kappa 0.000" in judge_lines(c)[1]
