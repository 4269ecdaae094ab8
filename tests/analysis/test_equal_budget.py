"""`seqk report --compare`: a seq@k run with chains against its budget partner (a pass@k run of
any k) at the spend of pass@1 .. pass@n, in every format; pass^t; the oracle-stopping line."""

from __future__ import annotations

import json
from math import comb
from pathlib import Path

import pytest
from helpers import copy_db, rows, write_variant
from recompute import _envelope, _vertices
from toybench import register_toys
from typer.testing import CliRunner

from seqk.cli import app
from seqk.config import runspec
from seqk.run import engine

PRICED = {"price": {"input": 1.0, "output": 2.0}}
SEQ = dict(metric="seq@k", k=3, chains=4, model="mock/py:scripts:seeded_coin", seed=7,
           options={"n": 16}, actor=PRICED)


@pytest.fixture(scope="module")
def built_pair(tmp_path_factory) -> tuple[str, str, Path]:
    register_toys()
    folder = tmp_path_factory.mktemp("pair")
    seq = runspec.load(write_variant(folder, **SEQ))
    # two pass@k partners: the largest k is the budget partner
    small = runspec.load(write_variant(folder, "p3.yaml", **(SEQ | {"metric": "pass@k", "k": 3,
                                                                     "chains": 1, "tag": "small"})))
    # a dearer endpoint for the partner: the toy's seq@k prompts are 4x its bare ones, and at the
    # same price resampling reaches all its success for less than one seq@k attempt costs
    partner = runspec.load(write_variant(folder, "p.yaml", **(SEQ | {
        "metric": "pass@k", "k": 12, "chains": 1, "actor": {"price": {"input": 4.0, "output": 8.0}}})))
    for spec in (seq, small, partner):
        engine.run(spec, folder / "seqk.duckdb")
    return seq.run_id, partner.run_id, folder / "seqk.duckdb"


@pytest.fixture
def pair(built_pair, db: Path) -> tuple[str, str]:
    """The three runs, made once for the module, in a copy of their database at `db`."""
    seq_id, pass_id, built = built_pair
    copy_db(built, db)
    return seq_id, pass_id


def report(db: Path, *args: str):
    return CliRunner().invoke(app, ["report", "--compare", "--db", str(db), *args])


def test_equal_budget_blocks_take_each_sides_frontier_at_each_budget(pair, db):
    seq_id, pass_id = pair
    out = report(db, "--format", "json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    blocks = [b for b in data["equal_budget"] if b["seq_run_id"] == seq_id]
    # no seq@k run without feedback here: resample until success leads, pass@m second
    assert [b["partner"] for b in blocks] == ["resample_until_success", "pass_at_m"]
    for b in blocks:
        assert (b["pass_run_id"], b["pass_k"], b["n_candidates"]) == (pass_id, 12, 2)
        assert b["unit"] == "US$" and b["unit_reason"] is None and b["n_shared"] == 16
        seq_cells = [c for c in b["cells"] if c["series"].startswith("seq@k depth")]
        partner_cells = [c for c in b["cells"] if not c["series"].startswith("seq@k depth")]
        assert {(c["width"], c["depth"]) for c in seq_cells} == {(w, d) for w in range(1, 5) for d in range(1, 4)}
        if b["partner"] == "pass_at_m":
            assert {c["depth"] for c in partner_cells} == {1}
        else:
            assert {(c["width"], c["depth"]) for c in partner_cells} == {
                (w, d) for w in range(1, 13) for d in range(1, 13) if w * d <= 12}
        # the budgets: the spends of both sides' frontier vertices (the upper concave envelope of
        # their cells), from where both have a cell to where the first of them reaches its best
        figures = [{(c["width"], c["depth"]): (c["value"], c["spend"]) for c in side}
                   for side in (seq_cells, partner_cells)]
        vertices = [[f[key][1] for key in _vertices(f)] for f in figures]
        low, high = max(v[0] for v in vertices), min(v[-1] for v in vertices)
        budgets = [p["budget"] for p in b["points"]]
        between = {s for v in vertices for s in v if low * (1 - 1e-9) <= s <= high * (1 + 1e-9)}
        assert budgets == pytest.approx(sorted(between))
        assert len(budgets) >= 3
        for p in b["points"]:
            # every task has every cell (no errors): the row is all 16, and each side's figure is its
            # frontier at the budget: the best mixture of at most two of its cells spending no more
            assert p["n_tasks"] == 16
            for side, (w, d, value, mix) in zip(figures, (("width", "depth", "seq_value", "seq_mix"), (
                    "partner_width", "partner_depth", "partner_value", "partner_mix")), strict=True):
                keys = list(side)
                best, (i, j, share) = _envelope([side[key] for key in keys], p["budget"])
                assert (p[w], p[d]) == keys[i] and p[value] == pytest.approx(best)
                if j is None:
                    assert p[mix] is None
                else:
                    assert (p[mix]["width"], p[mix]["depth"]) == keys[j] and p[mix]["share"] == pytest.approx(share)
            d = p["difference"]
            assert d["value"] == pytest.approx(p["seq_value"] - p["partner_value"]) and d["n"] == 16
            if d["low"] is not None:
                assert d["low"] <= d["value"] <= d["high"] and p["p_value"] is not None
                assert (d["low"] > 0 or d["high"] < 0) == (p["p_value"] < 0.05)
                assert p["band"]["low"] <= d["value"] <= p["band"]["high"]
        assert b["seq_better"] == [p["budget"] for p in b["points"] if p["band"] and p["band"]["low"] > 0]
    # the mock's answers ignore feedback: resample until success is never worse
    assert not blocks[0]["seq_better"]

    text = report(db)
    assert text.exit_code == 0
    assert f"at equal budget: {seq_id}" in text.output and "budget $" in text.output
    assert "  $/task   seq  " in text.output  # every call priced: the per-t spend in US$
    assert "vs resample until success from pass@k" in text.output and "verdict: " in text.output
    assert "not spend-matched" in text.output  # the pass@m block says what it is
    assert "simultaneous 95% band" in text.output and "Romano & Wolf" in text.output
    md = report(db, "--format", "markdown")
    assert f"at equal budget: {seq_id}" in md.output
    csv = report(db, "--format", "csv")
    assert "budget_resample_until_success_1_width" in csv.output.splitlines()[0]
    assert "budget_pass_at_m_1_band_low" in csv.output.splitlines()[0]
    # the seq@k run alone: its partners are read too, and every figure is the same
    alone = report(db, seq_id, "--format", "json")
    assert alone.exit_code == 0, alone.output
    again = [b for b in json.loads(alone.output)["equal_budget"] if b["seq_run_id"] == seq_id]

    def figures(b: dict) -> list:
        return [(p["budget"], p["width"], p["depth"], p["partner_width"], p["partner_depth"],
                 p["difference"] and p["difference"]["value"], p["band"] and p["band"]["low"]) for p in b["points"]]

    assert [figures(b) for b in again] == [figures(b) for b in blocks]


def test_pass_hat_t_is_the_unbiased_all_succeed_probability(pair, db):
    _, pass_id = pair
    out = report(db, "--format", "json")
    curves = {r["run_id"]: r["curve"] for r in json.loads(out.output)["runs"]}
    per_task = rows(db, "SELECT count(*) FILTER (WHERE success) FROM attempts WHERE run_id = ? "
                        "GROUP BY task_index", [pass_id])
    for point in curves[pass_id]:
        t = point["t"]
        assert point["pass_all_t"] == pytest.approx(sum(comb(c, t) / comb(12, t) for (c,) in per_task)
                                                    / len(per_task))
    assert "pass^t" in report(db).output


def test_a_run_stopped_by_its_grading_llm_judge_is_marked(tmp_path, db):
    from seqk import models

    models.register_mock("mock/j", lambda prompt: '{"score": 0.0, "reason": "no"}')
    spec = runspec.load(write_variant(tmp_path, benchmark="toyjudge", metric="seq@k", k=2,
                                      model="mock/py:scripts:seeded_coin", judge_model="mock/j",
                                      options={"n": 2}))
    engine.run(spec, db)
    out = CliRunner().invoke(app, ["report", "--db", str(db)])
    assert out.exit_code == 0, out.output
    assert f"{spec.run_id}: its chains stop on the verdict of the LLM judge" in out.output
    assert "Huang et al., ICLR 2024" in out.output


def test_plan_prints_the_smallest_detectable_lift_and_the_tasks_a_lift_needs(tmp_path, db):
    from seqk.power import detectable_lift, tasks_needed

    path = write_variant(tmp_path, **(SEQ | {"options": {"n": 16}, "max_tasks": 16}))
    few = CliRunner().invoke(app, ["plan", str(path), "--db", str(db)])
    assert "smallest detectable lift on 16 tasks: none: too few tasks" in few.output
    path = write_variant(tmp_path, **(SEQ | {"options": {"n": 200}, "max_tasks": 120}))
    out = CliRunner().invoke(app, ["plan", str(path), "--db", str(db), "--lift", "0.1"])
    assert out.exit_code == 0, out.output
    assert "smallest detectable lift on 120 tasks" in out.output and "exact" in out.output
    assert f"{detectable_lift(120, 0.3):.3f}" in out.output
    assert "discordance 0.300, assumed" in out.output
    assert f"a lift of 0.1 needs {tasks_needed(0.1, 0.3)} tasks" in out.output
    assert "attempts to run: 480 to 1440" in out.output  # 120 tasks x 4 chains, up to K = 3 each
    bad = CliRunner().invoke(app, ["plan", str(path), "--db", str(db), "--lift", "0.5"])
    assert bad.exit_code == 2 and "error:" in bad.output and "--lift 0.5" in bad.output


def test_plan_uses_the_discordance_of_the_stored_pair_at_its_upper_limit(tmp_path, db):
    from seqk.power import discordance_upper_limit

    one_chain = SEQ | {"chains": 1, "options": {"n": 40}}
    seq = runspec.load(write_variant(tmp_path, **one_chain))
    engine.run(seq, db)
    engine.run(runspec.load(write_variant(tmp_path, "p.yaml", **(one_chain | {"metric": "pass@k", "seed": 1000}))),
               db)
    [(n_shared, discordant, discordance)] = rows(
        db, "SELECT n_shared, n_seq_only + n_pass_only, discordance FROM feedback_lift WHERE seq_run_id = ?",
        [seq.run_id])
    assert discordant > 0 and discordance == pytest.approx(discordant / n_shared)
    out = CliRunner().invoke(app, ["plan", str(tmp_path / "variants" / "toy" / "v.yaml"), "--db", str(db)])
    assert out.exit_code == 0, out.output
    upper = discordance_upper_limit(discordant, n_shared)
    assert f"discordance {upper:.3f}, measured {discordant / n_shared:.3f} on {n_shared} tasks" in out.output
    assert "planned at its upper 95% limit" in out.output


@pytest.mark.slow  # vl-convert's PNG (~3 s of CPU); test_report's test_png_is_written stays
def test_html_and_png_carry_the_frontier_charts(pair, db, tmp_path):
    seq_id, _ = pair
    out = report(db, "--html", str(tmp_path / "r.html"), "--png", str(tmp_path / "r.png"))
    assert out.exit_code == 0, out.output
    page = (tmp_path / "r.html").read_text()
    assert f"{seq_id} vs resample until success at equal spend" in page
    assert "seq@k depth 3" in page
    assert "cdn.jsdelivr" not in page  # offline
    assert (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"


def test_relative_cells_divide_by_the_partner_at_the_same_spend(pair, db):
    from seqk import store
    from seqk.analysis.frontier import equal_budget

    seq_id, _ = pair
    with store.connect(db, read_only=True) as con:
        b = equal_budget(con, [seq_id], n_boot=50)[0]
    partner = sorted((c for c in b.cells if not c["series"].startswith("seq@k")), key=lambda c: c["spend"])
    best, pareto = -1.0, []
    for c in partner:
        if c["value"] > best:
            pareto.append(c)
            best = c["value"]
    relative = [c for c in b.cells if c["series"].startswith("seq@k") and c["relative"] is not None]
    assert relative
    for c in relative:
        lo = max((p for p in pareto if p["spend"] <= c["spend"] + 1e-12), key=lambda p: p["spend"])
        hi = min((p for p in pareto if p["spend"] >= c["spend"] - 1e-12), key=lambda p: p["spend"])
        assert lo["value"] - 1e-9 <= c["value"] / c["relative"] <= hi["value"] + 1e-9


def test_tasks_drawn_by_index_in_batches_are_the_draws_of_one_call(monkeypatch):
    """Many task types are resampled by drawing tasks by index, a batch of resamples at a time so
    that 28,500 tasks x 2,000 resamples never sit in memory at once: the batches are the same stream
    as one call drawing them all (the figures do not change with the batch size)."""
    import numpy as np

    from seqk.analysis import budget

    counts = np.random.default_rng(3).integers(1, 4, 301)  # many types: drawn by index
    n, n_boot = int(counts.sum()), 257
    stream = np.random.default_rng([1, 2])
    at_once = np.bincount((np.repeat(np.arange(len(counts)), counts)[stream.integers(0, n, size=(n_boot, n))]
                           + (np.arange(n_boot) * len(counts))[:, None]).ravel(),
                          minlength=n_boot * len(counts)).reshape(n_boot, len(counts))
    monkeypatch.setattr(budget, "DRAWN_AT_ONCE", 3 * n + 1)  # batches of 3 resamples, the last of 2
    drawn = np.random.default_rng([1, 2])
    assert np.array_equal(budget._draw(drawn, counts, n_boot), at_once)
    assert drawn.random() == stream.random()  # and the stream goes on from the same place
