"""`seqk report --compare --by AXIS` on docs/compare.md's database: which runs pair along each axis,
the q-values printed against scipy's Benjamini–Hochberg over p-values recomputed from the attempts,
the ranking, and the refusals."""

from __future__ import annotations

import json

import compare_db
import pytest
from recompute import flip_counts, paired, tango
from scipy.stats import false_discovery_control
from typer.testing import CliRunner

import seqk
from seqk.analysis.report import fmt_p
from seqk.cli import app

runner = CliRunner()
CRITICS = ("critic_half", "critic_sharp", "critic_vague")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    folder = tmp_path_factory.mktemp("grouped")
    db = folder / "seqk.duckdb"
    return db, compare_db.build(folder, db)


def test_by_critic_pairs_the_three_critics_with_q_values_recomputed_from_the_attempts(demo):
    db, ids = demo
    result = seqk.compare_by(db=db, by="critic")
    assert len(result.groups) == 1
    group = result.groups[0]
    assert group.shares["feedback_mode"] == "socratic" and group.shares["slice"] == "clbench-dkr"
    pairs = [(p.a.run_id, p.b.run_id) for p in group.pairs]
    assert pairs == [(ids[a], ids[b]) for a, b in (CRITICS[:2], CRITICS[::2], CRITICS[1:])]
    p_values = []
    for p in group.pairs:
        n, a_only, b_only = flip_counts(*paired(db, p.a.run_id, "seq@k", p.b.run_id, "seq@k", 3))
        low, high, pv = tango(a_only, b_only, n)
        assert p.comparison.t == 3 and p.also_differs == []
        assert (p.comparison.difference.low, p.comparison.difference.high) == pytest.approx((low, high), abs=1e-6)
        p_values.append(pv)
    expected = false_discovery_control(p_values)
    assert [p.q_value for p in group.pairs] == pytest.approx(list(expected), abs=1e-6)
    # the truth: sharp > half > vague, each pair a finding at a 5% false discovery rate
    assert all(p.q_value < 0.05 for p in group.pairs)
    assert [r.member.run_id for r in group.ranking] == [ids["critic_sharp"], ids["critic_half"], ids["critic_vague"]]
    assert group.n_ranked == 60 and group.ranking_t == 3

    out = runner.invoke(app, ["report", "--compare", "--by", "critic", "--db", str(db)])
    assert out.exit_code == 0, out.output
    for p in group.pairs:
        assert f"p={fmt_p(p.comparison.p_value)} q={fmt_p(p.q_value)} n=60" in out.stdout
    assert "q: Benjamini–Hochberg over the 3 pair(s)" in out.stdout
    assert "1 [1, 1]  0.933  mock/py:benchmarks.clbench.demo:critic_sharp" in out.stdout


def test_by_feedback_lists_binary_beside_the_critics_and_what_else_differs(demo):
    db, ids = demo
    result = seqk.compare_by(db=db, by="feedback")
    (group,) = result.groups
    assert {m.label for m in group.members} == {"binary"} | {
        f"socratic (mock/py:benchmarks.clbench.demo:{c})" for c in CRITICS}
    with_binary = [p for p in group.pairs if ids["cheap"] in (p.a.run_id, p.b.run_id)]
    assert len(with_binary) == 3 and all(p.also_differs == ["chains"] for p in with_binary)
    # the chains make binary's values fractional: a bootstrap interval and the p of its resamples,
    # which agree, and a q over the whole table
    for p in with_binary:
        c = p.comparison
        assert c.interval == "bootstrap" and c.p_value is not None and p.q_value is not None
        assert (c.difference.low > 0 or c.difference.high < 0) == (c.p_value < 0.05)
        assert p.q_value >= c.p_value
    assert len(group.ranking) == 4
    body = json.loads(runner.invoke(app, ["report", "--compare", "--by", "feedback", "--db", str(db),
                                          "--format", "json"]).stdout)
    assert body["by"] == "feedback" and len(body["groups"][0]["pairs"]) == 6
    csv_out = runner.invoke(app, ["report", "--compare", "--by", "feedback", "--db", str(db), "--format", "csv"])
    assert csv_out.stdout.splitlines()[0].endswith("p_value,q_value,interval,also_differs")
    assert len(csv_out.stdout.splitlines()) == 7


def test_by_model_pairs_nothing_across_metrics_and_says_so(demo):
    db, _ = demo
    out = runner.invoke(app, ["report", "--compare", "--by", "model", "--db", str(db)])
    assert out.exit_code == 0
    assert "0 pair(s) in 0 group(s)" in out.stdout
    assert "No two runs of one slice differ along model with everything else shared." in out.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["--by", "critic"], "--by groups the pairs of --compare: give both"),
    (["--compare", "--by", "temperature"], "'temperature' is not one of model, feedback, critic, judge"),
    (["--compare", "--by", "critic", "--html", "x.html"], "it takes no --html or --png"),
])
def test_by_is_refused_in_one_line_where_it_means_nothing(demo, args, message):
    db, _ = demo
    out = runner.invoke(app, ["report", *args, "--db", str(db)])
    assert out.exit_code == 2 and message in out.stderr and out.stderr.count("\n") == 1
