"""`seqk report --compare`: a seq@k run with chains against its budget partner (a pass@k run of
any k) at the spend of pass@1 .. pass@n, in every format; pass^t; the oracle-stopping line."""

from __future__ import annotations

import json
from math import comb
from pathlib import Path

import pytest
from helpers import rows, write_variant
from typer.testing import CliRunner

from seqk.cli import app
from seqk.config import spec as runspec
from seqk.run import scheduler as engine

PRICED = {"price": {"input": 1.0, "output": 2.0}}
SEQ = dict(metric="seq@k", k=3, chains=4, model="mock/py:scripts:seeded_coin", seed=7,
           options={"n": 16}, actor=PRICED)


@pytest.fixture
def pair(tmp_path: Path, db: Path) -> tuple[str, str]:
    seq = runspec.load(write_variant(tmp_path, **SEQ))
    # two pass@k partners: the largest k is the budget partner
    small = runspec.load(write_variant(tmp_path, "p3.yaml", **(SEQ | {"metric": "pass@k", "k": 3,
                                                                       "chains": 1, "tag": "small"})))
    partner = runspec.load(write_variant(tmp_path, "p.yaml", **(SEQ | {"metric": "pass@k", "k": 12,
                                                                        "chains": 1})))
    for spec in (seq, small, partner):
        engine.run(spec, db)
    return seq.run_id, partner.run_id


def report(db: Path, *args: str):
    return CliRunner().invoke(app, ["report", "--compare", "--db", str(db), *args])


def test_equal_budget_block_picks_the_best_cell_that_costs_no_more(pair, db):
    seq_id, pass_id = pair
    out = report(db, "--format", "json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    [budget] = data["equal_budget"]
    assert (budget["seq_run_id"], budget["pass_run_id"], budget["pass_k"]) == (seq_id, pass_id, 12)
    assert budget["unit"] == "US$" and budget["n_candidates"] == 2
    assert [p["pass_width"] for p in budget["points"]] == list(range(1, 13))
    cost = dict(rows(db, "SELECT run_id, sum(cost_usd) FROM calls GROUP BY ALL"))
    n_samples = rows(db, "SELECT count(*) FROM attempts WHERE run_id = ?", [pass_id])[0][0]
    frontier = rows(db, "SELECT width, depth, value, cost_usd_per_task FROM frontier WHERE run_id = ?",
                    [seq_id])
    for p in budget["points"]:
        assert p["budget"] == pytest.approx(p["pass_width"] * cost[pass_id] / n_samples)
        within = [f for f in frontier if f[3] <= p["budget"] * (1 + 1e-9)]
        if not within:
            assert p["width"] is None
            continue
        best = max(within, key=lambda f: (f[2], -f[3]))
        assert (p["width"], p["depth"]) == best[:2] and p["seq_value"] == pytest.approx(best[2])
        d = p["difference"]
        assert d["value"] == pytest.approx(p["seq_value"] - p["pass_value"])
        assert d["low"] <= d["value"] <= d["high"] and d["n"] == 16
    assert any(p["width"] is not None and p["width"] > 1 for p in budget["points"])

    text = report(db)
    assert text.exit_code == 0
    assert f"at equal budget: {seq_id}" in text.output and "budget $" in text.output
    assert "  $/task   seq  " in text.output  # every call priced: the per-t spend in US$
    assert "paired task bootstrap" in text.output and "seed" in text.output
    md = report(db, "--format", "markdown")
    assert f"at equal budget: {seq_id}" in md.output
    csv = report(db, "--format", "csv")
    assert "budget_at_pass_12_width" in csv.output.splitlines()[0]
    # the seq@k run alone: its budget partner (k=12) is no lift partner (same k), and is read too
    alone = report(db, seq_id, "--format", "json")
    assert alone.exit_code == 0, alone.output
    [again] = json.loads(alone.output)["equal_budget"]

    def cells(b: dict) -> list:
        return [(p["pass_width"], p["width"], p["depth"], p["difference"] and p["difference"]["n"])
                for p in b["points"]]

    def figures(b: dict) -> list:
        return [x for p in b["points"] for x in (p["budget"], p["pass_value"], p["seq_value"],
                                                  *(p["difference"] or {}).values()) if x is not None]

    assert cells(again) == cells(budget) and figures(again) == pytest.approx(figures(budget))


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
    from seqk.stats import mcnemar_detectable_lift, mcnemar_tasks_needed

    path = write_variant(tmp_path, **(SEQ | {"options": {"n": 16}, "max_tasks": 16}))
    few = CliRunner().invoke(app, ["plan", str(path), "--db", str(db)])
    assert "smallest detectable lift on 16 tasks: none: too few tasks" in few.output
    path = write_variant(tmp_path, **(SEQ | {"options": {"n": 200}, "max_tasks": 120}))
    out = CliRunner().invoke(app, ["plan", str(path), "--db", str(db), "--lift", "0.1"])
    assert out.exit_code == 0, out.output
    assert "smallest detectable lift on 120 tasks" in out.output
    assert f"{mcnemar_detectable_lift(120, 0.3):.3f}" in out.output
    assert "discordance 0.300, assumed" in out.output
    assert f"a lift of 0.1 needs {mcnemar_tasks_needed(0.1, 0.3)} tasks" in out.output
    assert "attempts to run: 480 to 1440" in out.output  # 120 tasks x 4 chains, up to K = 3 each
    bad = CliRunner().invoke(app, ["plan", str(path), "--db", str(db), "--lift", "0.5"])
    assert bad.exit_code == 2 and "error:" in bad.output and "--lift 0.5" in bad.output


def test_plan_uses_the_discordance_of_the_stored_pair(tmp_path, db):
    one_chain = SEQ | {"chains": 1, "options": {"n": 40}}
    seq = runspec.load(write_variant(tmp_path, **one_chain))
    engine.run(seq, db)
    engine.run(runspec.load(write_variant(tmp_path, "p.yaml", **(one_chain | {"metric": "pass@k", "seed": 1000}))),
               db)
    [(n_shared, discordant)] = rows(
        db, "SELECT n_shared, n_seq_only + n_pass_only FROM feedback_lift WHERE seq_run_id = ?", [seq.run_id])
    assert discordant > 0
    out = CliRunner().invoke(app, ["plan", str(tmp_path / "variants" / "toy" / "v.yaml"), "--db", str(db)])
    assert out.exit_code == 0, out.output
    assert f"discordance {discordant / n_shared:.3f}, measured: {discordant} of {n_shared}" in out.output


def test_html_and_png_carry_the_frontier_charts(pair, db, tmp_path):
    seq_id, _ = pair
    out = report(db, "--html", str(tmp_path / "r.html"), "--png", str(tmp_path / "r.png"))
    assert out.exit_code == 0, out.output
    page = (tmp_path / "r.html").read_text()
    assert f"{seq_id} vs pass@12 at equal spend" in page
    assert "pass@k at the same spend (blank: beyond pass@1..n)" in page and "seq@k depth 3" in page
    assert "cdn.jsdelivr" not in page  # offline
    assert (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"


def test_relative_cells_divide_by_pass_at_the_same_spend(pair, db):
    from seqk import store
    from seqk.analysis.frontier import equal_budget

    seq_id, _ = pair
    with store.connect(db, read_only=True) as con:
        [b] = equal_budget(con, [seq_id])
    pass_cells = sorted((c for c in b.cells if c["series"] == "pass@k"), key=lambda c: c["spend"])
    for c in (c for c in b.cells if c["series"] != "pass@k" and c["relative"] is not None):
        lo = max((p for p in pass_cells if p["spend"] <= c["spend"] + 1e-12), key=lambda p: p["spend"])
        hi = min((p for p in pass_cells if p["spend"] >= c["spend"] - 1e-12), key=lambda p: p["spend"])
        assert lo["value"] - 1e-9 <= c["value"] / c["relative"] <= hi["value"] + 1e-9
