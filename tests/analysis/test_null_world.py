"""Where feedback does nothing, seqk must say so (issue 27).

The null world of bench/null_world.py: every seq@k attempt and pass@k sample is an independent
draw with its task's own chance p_i (heterogeneous across tasks), 10% of requests fail for good at
random, and the truth of every figure is a formula of the p_i. The replicates here run through
seqk's own estimators (seqk.analysis.survival, cells, budget, paired), fed the arrays the database
would give them (bench/null_world.py chains_of; tests/analysis/test_survival.py holds those
estimators equal to the SQL views, and the last test here goes through a real database and the
report). bench/bench_null.py runs the big replicate counts through the CLI.

What must hold: seq@t and every frontier cell unbiased (|bias| < 0.005), where the complete-case
seq@t of before is biased up; the stopping-matched partner is never worse than seq@k in truth, at
any budget, while the old pass@m block's truth favours seq@k; and null worlds claim a finding (a
lift with p < 0.05, or a budget where the band puts seq@k above) about as often as their nominal
level, where the old block claims one in a third of them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from seqk.analysis import budget, cells, paired, survival
from seqk.analysis.report import report, to_json

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import null_world as nw  # noqa: E402

WORLD = nw.World()


def _figures(side: budget.Frontier) -> list[budget.CellFigure]:
    return budget._figures(side, np.ones(len(side.keys), dtype=bool))


@pytest.mark.slow  # a long statistical simulation
def test_seq_at_t_and_every_frontier_cell_are_unbiased():
    rng = np.random.default_rng(2027)
    errors: dict[tuple, list[float]] = {}
    for r in range(700):
        found = nw.draw(WORLD, rng)
        runs = nw.chains_of(found, WORLD, r)
        seq, pas = runs["seq"], runs["pass"]
        curve = survival.curve(seq, "censored")
        for t in range(1, WORLD.k + 1):
            truth = nw.truth_value(found.p, t)
            errors.setdefault(("seq@t", t), []).append(curve.at(t).point - truth)
            # the complete-case estimate of before: chains whose outcome at t is known
            known = ((seq.first_success > 0) & (seq.first_success <= t)) | (seq.valid_prefix >= t)
            solved = (seq.first_success > 0) & (seq.first_success <= t)
            share = seq.per_task(solved.astype(float)) / np.maximum(seq.per_task(known.astype(float)), 1)
            errors.setdefault(("complete case", t), []).append(
                float(share[seq.per_task(known.astype(float)) > 0].mean()) - truth)
        for c in _figures(cells.seq_frontier(seq, "censored", "tokens")):
            errors.setdefault(("seq cell", c.width, c.depth), []).append(
                c.value - nw.truth_value(found.p, c.width * c.depth))
            errors.setdefault(("seq spend", c.width, c.depth), []).append(
                c.spend / nw.truth_spend(found.p, c.width, c.depth) - 1)
        side = cells.pass_frontier(pas, "censored", "tokens", stopping=True)
        for c, figure in zip(side.cells, _figures(side), strict=True):
            p = found.p[c.defined]
            errors.setdefault(("until success", c.width, c.depth), []).append(
                figure.value - nw.truth_value(p, c.width * c.depth))
            errors.setdefault(("until success spend", c.width, c.depth), []).append(
                figure.spend / nw.truth_spend(p, c.width, c.depth) - 1)
    bias = {key: float(np.mean(v)) for key, v in errors.items()}
    for key, value in bias.items():
        if key[0] == "complete case":
            continue
        limit = 0.01 if "spend" in key[0] else 0.005  # spends: relative
        assert abs(value) < limit, (key, value)
    assert {key[1:] for key in bias if key[0] == "seq cell"} == {
        (w, d) for w in range(1, WORLD.chains + 1) for d in range(1, WORLD.k + 1)}
    # what seqk reported before: errors left out, complete cases only, biased up
    assert bias[("complete case", WORLD.k)] > 0.01


def _truth_block(p: np.ndarray, seq_cells: list[tuple[int, int]], partner: list[tuple[int, int]],
                 partner_stops: bool) -> list[float]:
    """The true seq - partner at equal spend over a fine grid of budgets: each side's best cell
    whose true spend is at most the budget (a spend of m samples for pass@m, which never stops)."""

    def spend(w: int, d: int, stops: bool) -> float:
        return nw.truth_spend(p, w, d) if stops else w * d * nw.MEAN_TOKENS

    seq = [(nw.truth_value(p, w * d), spend(w, d, True)) for w, d in seq_cells]
    other = [(nw.truth_value(p, w * d), spend(w, d, partner_stops)) for w, d in partner]
    top = min(max(s for _, s in seq), max(s for _, s in other))
    out = []
    for budget_ in np.linspace(max(min(s for _, s in seq), min(s for _, s in other)), top, 400):
        out.append(max(v for v, s in seq if s <= budget_ + 1e-9) - max(v for v, s in other if s <= budget_ + 1e-9))
    return out


def test_the_stopping_matched_partner_is_never_worse_in_truth_and_pass_at_m_is():
    p = np.random.default_rng(5).beta(WORLD.a, WORLD.b, 100_000)
    seq = [(w, d) for w in range(1, WORLD.chains + 1) for d in range(1, WORLD.k + 1)]
    until = [(w, d) for w in range(1, WORLD.pass_k + 1) for d in range(1, WORLD.pass_k // w + 1)]
    assert max(_truth_block(p, seq, until, partner_stops=True)) <= 1e-12
    assert max(_truth_block(p, seq, seq, partner_stops=True)) <= 1e-12  # feedback none: the same policy
    artefact = max(_truth_block(p, seq, [(m, 1) for m in range(1, WORLD.pass_k + 1)], partner_stops=False))
    assert artefact > 0.03  # issue 27: the old block's "advantage" with feedback doing nothing


@pytest.mark.slow  # a long statistical simulation
def test_null_worlds_claim_a_finding_about_as_often_as_their_level():
    world = nw.World(n_tasks=60)
    rng = np.random.default_rng(33)
    claims = {"lift": 0, "none_feedback": 0, "resample_until_success": 0, "pass_at_m": 0}
    replicates = 150
    for r in range(replicates):
        runs = nw.chains_of(nw.draw(world, rng), world, r)
        lift = paired.compare_chains(runs["seq"], runs["pass"], world.k, name=f"lift:{r}", n_boot=200)
        claims["lift"] += lift.p_value is not None and lift.p_value < 0.05
        seq = cells.seq_frontier(runs["seq"], "censored", "tokens")
        for partner, side in (("none_feedback", cells.seq_frontier(runs["none"], "censored", "tokens")),
                              ("resample_until_success", cells.pass_frontier(
                                  runs["pass"], "censored", "tokens", stopping=True)),
                              ("pass_at_m", cells.pass_frontier(runs["pass"], "censored", "tokens",
                                                                stopping=False))):
            found = budget.compare_at_equal_spend(seq, side, name=f"{partner}:{r}", n_boot=200)
            claims[partner] += bool(found.a_better)
    share = {key: value / replicates for key, value in claims.items()}
    # two-sided at 5%; 150 worlds: binomial sd 1.8%, so 9.5% is 2.5 sd above the level
    assert share["lift"] <= 0.095, share
    # one-sided claims (seq better) of a simultaneous band, the truth at or below 0 everywhere
    assert share["none_feedback"] <= 0.05 and share["resample_until_success"] <= 0.05, share
    assert share["pass_at_m"] >= 0.15, share  # the artefact the old block showed


def test_the_range_beside_each_budget_is_the_same_procedure_read_with_errors_as_failures_or_successes():
    """point_differences is compare_at_equal_spend's point estimate without the bootstrap: on the
    policy the block used it gives the rows' differences exactly; with errors counted as failures
    the seq@k side loses more than resampling does (only an unsolved chain reaches attempt 2)."""
    world = nw.World(n_tasks=120)
    runs = nw.chains_of(nw.draw(world, np.random.default_rng(9)), world)
    ends: dict[str, list[float]] = {}
    for policy in ("censored", "failures", "successes"):
        seq = cells.seq_frontier(runs["seq"], policy, "tokens")
        until = cells.pass_frontier(runs["pass"], policy, "tokens", stopping=True)
        if policy == "censored":
            found = budget.compare_at_equal_spend(seq, until, name="range", n_boot=200)
            budgets = [row.budget for row in found.rows]
            assert budgets and budget.point_differences(seq, until, budgets) == pytest.approx(
                [row.difference.value for row in found.rows])
        ends[policy] = budget.point_differences(seq, until, budgets)
    assert all(x is not None for x in ends["failures"] + ends["successes"])
    assert ends["failures"] != ends["censored"] != ends["successes"]


@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    """A few replicates written into a real database and reported through SQL, as a user would."""
    db = tmp_path_factory.mktemp("null") / "null.duckdb"
    world = nw.World(n_tasks=80)
    draws = nw.write(db, world, 6, seed=8)
    data = json.loads(to_json(report([], db, compare=True, n_boot=200)))
    return world, draws, data


@pytest.mark.slow  # a null world's whole report (~2.5 s of CPU), as the module's other simulations
def test_the_report_carries_the_ranges_the_partners_and_the_bands(reported):
    world, draws, data = reported
    runs = {r["run_id"]: r for r in data["runs"]}
    errors = []
    for i, found in enumerate(draws):
        ids = nw.run_ids(i)
        for key in ("seq", "pass"):
            for point in runs[ids[key]]["curve"]:
                assert point["value_if_failures"] <= point["value_if_successes"], point
                if key == "seq":
                    assert point["value_if_failures"] <= point["value"] <= point["value_if_successes"]
                    errors.append(point["value"] - nw.truth_value(found.p, point["t"]))
        lift = runs[ids["seq"]]["lift"]
        assert lift["b_run_id"] == ids["pass"] and lift["p_value"] is not None
        assert lift["q_value"] >= lift["p_value"] and lift["if_failures"] is not None
        blocks = [b for b in data["equal_budget"] if b["seq_run_id"] == ids["seq"]]
        assert [b["partner"] for b in blocks] == ["none_feedback", "resample_until_success", "pass_at_m"]
        assert blocks[0]["pass_run_id"] == ids["none"] and blocks[1]["pass_run_id"] == ids["pass"]
        for b in blocks:
            assert b["unit"] == "US$" and b["points"]
            for point in b["points"]:
                if point["band"] is not None:
                    d = point["difference"]
                    assert point["band"]["low"] <= d["value"] <= point["band"]["high"]
            # every cell the charts plot carries the range errors leave (issue 27, 2)
            for cell in b["cells"]:
                assert cell["value_if_failures"] is not None and cell["value_if_successes"] is not None, cell
                assert cell["value_if_failures"] <= cell["value_if_successes"], cell
                if cell["width"] == 1 and cell["series"].startswith("seq@k"):  # Kaplan-Meier: between its readings
                    assert cell["value_if_failures"] <= cell["value"] + 1e-12 <= cell["value_if_successes"] + 2e-12
        assert not blocks[1]["seq_better"]
    assert abs(np.mean(errors)) < 0.02  # a few worlds only: the bias test above has the power


@pytest.mark.slow  # a long statistical simulation
def test_done_when_a_run_pair_where_feedback_does_nothing_reads_as_no_finding(tmp_path, db):
    """Issue 27's "done when", through the real engine: 500 tasks, 8 chains of 3 attempts against
    one pass@24 run (28.5: it serves the lift, the framing and equal budget), a mock whose answers
    ignore feedback, 10% of requests failing for good at random. seq@t is within 0.015 of the
    truth at every t, every figure with errors carries its range, and resample until success
    finds no budget where seq@k is better."""
    from helpers import write_variant
    from scripts import null_world_p
    from typer.testing import CliRunner

    from seqk.cli import app
    from seqk.config import runspec
    from seqk.run import engine

    base = dict(benchmark="toy", model="mock/py:scripts:null_world", seed=11, options={"n": 500},
                concurrency=64, retry={"max_retries": 0, "base_delay_s": 0.0})
    seq = runspec.load(write_variant(tmp_path, "seq.yaml", metric="seq@k", k=3, chains=8, **base))
    partner = runspec.load(write_variant(tmp_path, "pass.yaml", metric="pass@k", k=24, **base))
    for spec in (seq, partner):
        engine.run(spec, db)
    out = CliRunner().invoke(app, ["report", "--compare", "--format", "json", "--db", str(db)])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    runs = {r["run_id"]: r for r in data["runs"]}
    p = np.array([null_world_p(i) for i in range(1, 501)])
    assert runs[seq.run_id]["n_error_attempts"] > 500  # a tenth of ~9,000 requests failed for good
    for point in runs[seq.run_id]["curve"]:
        truth = nw.truth_value(p, point["t"])
        assert abs(point["value"] - truth) < 0.015, (point, truth)
        assert point["value_if_failures"] < point["value"] < point["value_if_successes"]
    for point in runs[partner.run_id]["curve"][:3]:
        assert point["value_if_failures"] is not None and point["value_if_successes"] is not None
    lift = runs[seq.run_id]["lift"]
    assert lift["b_run_id"] == partner.run_id and lift["t"] == 3
    assert lift["error_share"] > 0.01 and lift["if_failures"] < lift["if_successes"]
    assert runs[seq.run_id]["framing"]["b_run_id"] == partner.run_id
    blocks = {b["partner"]: b for b in data["equal_budget"] if b["seq_run_id"] == seq.run_id}
    assert set(blocks) == {"resample_until_success", "pass_at_m"}
    until = blocks["resample_until_success"]
    assert until["pass_run_id"] == partner.run_id and until["points"]
    assert until["unit"] == "tokens" and until["unit_reason"] == "local/free model: compared in tokens"
    assert until["seq_better"] == []
    text = CliRunner().invoke(app, ["report", "--compare", "--db", str(db)]).output
    for b in blocks.values():  # every budget's difference carries its range
        assert all(p["if_failures"] is not None and p["if_successes"] is not None for p in b["points"])
    gains = runs[seq.run_id]["gains_if_errors"]
    assert set(gains) == {"delta", "egs", "lgs"} and gains["delta"][0] < gains["delta"][1]
    curve = runs[seq.run_id]["curve"]
    for i, end in enumerate(("value_if_failures", "value_if_successes")):
        delta = curve[-1][end] - curve[0][end]
        assert gains["delta"][i] == pytest.approx(delta)
        assert gains["egs"][i] == pytest.approx((curve[1][end] - curve[0][end]) / delta)
    assert runs[seq.run_id]["framing"]["detectable"] is not None
    assert "verdict: no budget where seq@k is better" in text
    assert "errors as failures / successes:" in text  # the lift's range beside its p
    assert "errors as failures / successes: Δ " in text  # ΔSeq@K's, EGS's and LGS's
    assert "range: seq − partner if errors were failures / successes, budget by budget:" in text
    assert text.count("500 tasks detect") >= 2  # the lift's and the framing's (28.3)


@pytest.mark.parametrize("world", [nw.World(n_tasks=150), nw.World(n_tasks=300, chains=1)])
def test_a_block_over_task_types_gives_the_figures_over_tasks(world):
    """The report's blocks group each frontier's tasks into types once (cells.typed: the same
    features and cells defined) and compare over pairs of types with their counts: the same task
    counts, budgets, cells and point figures as over tasks (sums in another order: within 1e-12),
    and intervals from the same seeded stream over exact types, so within Monte Carlo noise of
    the per-task ones (one chain a task: 300 tasks of 187 types)."""
    runs = nw.chains_of(nw.draw(world, np.random.default_rng(11)), world)
    seq = cells.seq_frontier(runs["seq"], "censored", "tokens")
    typed_seq = cells.typed(seq)
    assert typed_seq.counts.sum() == len(seq.keys) and len(typed_seq.counts) < len(seq.keys)
    assert np.array_equal(typed_seq.features[typed_seq.rows_of], seq.features)
    for side in (cells.pass_frontier(runs["pass"], "censored", "tokens", stopping=True),
                 cells.seq_frontier(runs["none"], "censored", "tokens")):
        per_task = budget.compare_at_equal_spend(seq, side, name="types", n_boot=400)
        over_types = budget.compare_at_equal_spend(typed_seq, cells.typed(side), name="types", n_boot=400)
        assert over_types.n_shared == per_task.n_shared and len(over_types.rows) == len(per_task.rows) > 3
        for mine, theirs in ((over_types.cells_a, per_task.cells_a), (over_types.cells_b, per_task.cells_b)):
            assert [(c.width, c.depth, c.n_tasks) for c in mine] == [(c.width, c.depth, c.n_tasks) for c in theirs]
            assert [c.value for c in mine] == pytest.approx([c.value for c in theirs], rel=1e-12, abs=1e-14)
            assert [c.spend for c in mine] == pytest.approx([c.spend for c in theirs], rel=1e-12)
        for mine, theirs in zip(over_types.rows, per_task.rows, strict=True):
            assert mine.budget == pytest.approx(theirs.budget, rel=1e-12) and mine.n_tasks == theirs.n_tasks
            assert (mine.a.width, mine.a.depth, mine.b.width, mine.b.depth) == (
                theirs.a.width, theirs.a.depth, theirs.b.width, theirs.b.depth)
            assert mine.difference.value == pytest.approx(theirs.difference.value, abs=1e-12)
            assert (mine.difference.low is None) == (theirs.difference.low is None)
            if theirs.difference.low is None:
                continue
            width = theirs.difference.high - theirs.difference.low
            assert abs(mine.difference.low - theirs.difference.low) < 0.25 * width
            assert abs(mine.difference.high - theirs.difference.high) < 0.25 * width
