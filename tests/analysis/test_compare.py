"""`seqk compare A B` on docs/compare.md's database (tests/compare_db.py: a cheap model's seq@k run
with 4 chains, a strong model's pass@1 run, three socratic critics), each figure checked against an
independent recomputation from the attempts table, with numpy and scipy only: per-task values,
Tango's score interval and test through a numerically maximised restricted likelihood, a paired
bootstrap of 20,000 task resamples, the flips."""

from __future__ import annotations

import json
import shutil

import compare_db
import pytest
from helpers import make_run
from recompute import attempts, bootstrap, crossover, equal_budget, flip_counts, frontier, paired, tango
from typer.testing import CliRunner

import seqk
from seqk import api
from seqk.cli import app
from seqk.errors import BadInput

runner = CliRunner()


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    folder = tmp_path_factory.mktemp("compare")
    db = folder / "seqk.duckdb"
    return db, compare_db.build(folder, db)


def check_at_t(db, result, metrics: tuple[str, str]) -> None:
    for x in result.at_t:
        a, b = paired(db, result.a.run.run_id, metrics[0], result.b.run.run_id, metrics[1], x.t)
        assert x.difference.n == len(a) == 60
        assert x.a_value == pytest.approx(a.mean()) and x.b_value == pytest.approx(b.mean())
        assert x.difference.value == pytest.approx(a.mean() - b.mean())
        if set(a) | set(b) <= {0.0, 1.0}:
            n, a_only, b_only = flip_counts(a, b)
            low, high, p = tango(a_only, b_only, n)
            assert (x.difference.low, x.difference.high) == pytest.approx((low, high), abs=1e-6)
            assert x.p_value == pytest.approx(p, abs=1e-6)
            assert (x.p_value < 0.05) == (x.difference.low > 0 or x.difference.high < 0)
        else:
            low, high = bootstrap(a, b)
            assert x.difference.low == pytest.approx(low, abs=0.015)
            assert x.difference.high == pytest.approx(high, abs=0.015)


def solved(db, run_id: str) -> dict[int, tuple[int, int]]:
    """task -> (first succeeding attempt, lowest chain succeeding there), for solved tasks."""
    out: dict[int, tuple[int, int]] = {}
    for task, chain, index, success in attempts(db, run_id):
        if success and (task not in out or (index, chain) < out[task]):
            out[task] = (index, chain)
    return out


def check_flips(db, result) -> None:
    a, b = solved(db, result.a.run.run_id), solved(db, result.b.run.run_id)
    assert [(f.task_index, f.attempt_index, f.chain_index) for f in result.flips.a_only] == \
        [(i, *a[i]) for i in sorted(set(a) - set(b))]
    assert [(f.task_index, f.attempt_index, f.chain_index) for f in result.flips.b_only] == \
        [(i, *b[i]) for i in sorted(set(b) - set(a))]
    assert result.flips.n_both == len(set(a) & set(b))
    assert result.flips.n_neither == 60 - len(set(a) | set(b))


def check_equal_budget(db, result) -> dict:
    """Every budget's cells, values, difference, interval and band, the band's critical value and
    the cross-over, against tests/recompute.py's (20,000 resamples of its own: the intervals agree
    to bootstrap noise)."""
    a, b = result.a.run, result.b.run
    mine = equal_budget(frontier(db, a.run_id, a.metric, a.k), frontier(db, b.run_id, b.metric, b.k))
    e = result.equal_budget
    assert e.unit == "US$" and e.refusal is None and e.n_shared == mine["n_shared"] == 60
    assert len(e.rows) == len(mine["rows"]) > 0
    for row, x in zip(e.rows, mine["rows"], strict=True):
        assert row.budget == pytest.approx(x["budget"], rel=1e-9) and row.n_tasks == 60
        for mine_, (cell, mixed, share, value) in ((row.a, x["a"]), (row.b, x["b"])):
            assert ((mine_.width, mine_.depth), mine_.value) == (cell, pytest.approx(value))
            if mixed is None:
                assert mine_.mixed is None
            else:
                assert mine_.mixed == (*mixed, pytest.approx(share))
        assert row.a.spend <= row.budget * (1 + 1e-9) and row.b.spend <= row.budget * (1 + 1e-9)
        assert row.difference.value == pytest.approx(x["difference"])
        # bootstrap noise: 2,000 resamples against the oracle's 20,000 (an end near a regime change of
        # the frontier moves by up to 0.028 across seeds at 2,000 resamples, 0.005 at 20,000)
        assert (row.difference.low, row.difference.high) == pytest.approx((x["low"], x["high"]), abs=0.03)
        assert row.band == pytest.approx(x["band"], abs=0.03)
        # the pointwise interval and its p agree (one set of resamples)
        assert (row.p_value < 0.05) == (row.difference.low > 0 or row.difference.high < 0)
    assert e.band_critical == pytest.approx(mine["critical"], rel=0.05)
    expected = crossover(mine["rows"])
    if expected is None:
        assert e.crossover is None
    else:
        assert e.crossover is not None
        assert (e.crossover.budget, e.crossover.low) == pytest.approx((expected["budget"], expected["low"]), rel=1e-9)
        assert (e.crossover.before, e.crossover.established) == (expected["before"], expected["established"])
        assert (e.crossover.high is None) == (expected["high"] is None)
    return mine


# --- the three questions ----------------------------------------------------------------------


def test_critic_x_against_critic_y(demo):
    db, ids = demo
    result = seqk.compare(ids["critic_sharp"], ids["critic_vague"], db)
    assert list(result.differs) == ["critic.model", "critic.price"]
    assert result.differs["critic.model"] == ("mock/py:benchmarks.clbench.demo:critic_sharp",
                                              "mock/py:benchmarks.clbench.demo:critic_vague")
    assert [x.t for x in result.at_t] == [1, 2, 3]
    check_at_t(db, result, ("seq@k", "seq@k"))
    # the sharp critic's question helps (known truth: 0.75 against the task's own chance)
    assert result.at_t[2].difference.low > 0 and result.at_t[2].p_value < 0.05
    # attempt 1 sees no feedback and shares its seed: identical in both runs
    assert result.at_t[0].difference.value == 0 and result.at_t[0].n_a_only == result.at_t[0].n_b_only == 0
    check_flips(db, result)
    assert result.flips.b_only == [] and len(result.flips.a_only) > 5
    # at equal spend: the vague critic is cheaper, so at the lowest budget it can mix second
    # attempts in where the sharp one cannot (attempt 1 is the same in both runs: the band is
    # narrow there), and the sharp one leads from the budget of its two attempts
    check_equal_budget(db, result)
    x = result.equal_budget.crossover
    assert x is not None and (x.before, x.established) == ("b", True)
    e = result.equal_budget
    assert e.b_better == [e.rows[0].budget] and e.a_better and min(e.a_better) > max(e.b_better)


def test_socratic_against_binary_with_the_spend_it_takes(demo):
    db, ids = demo
    result = seqk.compare(ids["critic_sharp"], ids["cheap"], db)
    assert list(result.differs)[:2] == ["chains", "feedback_mode"]
    assert result.differs["feedback_mode"] == ("socratic", "binary")
    assert result.differs["critic.model"] == ("mock/py:benchmarks.clbench.demo:critic_sharp", None)
    check_at_t(db, result, ("seq@k", "seq@k"))  # b's chains make its values fractional: bootstrap
    assert all(x.interval == "bootstrap" for x in result.at_t)
    check_flips(db, result)
    # socratic pays its critic: more per task than binary at every t
    curves = zip(result.a.run.curve, result.b.run.curve, strict=True)
    assert all(pa.cost_usd_per_task > pb.cost_usd_per_task for pa, pb in curves)
    # at equal spend binary's chains are ahead at the lowest budget (socratic's first attempt costs
    # what binary's second and some third attempts do), the sharp critic at the top (in truth seq@3
    # 0.96 with its questions, against 0.75 for binary's 1x3 and 44% of 2x3 at that spend)
    check_equal_budget(db, result)
    e = result.equal_budget
    assert e.b_better == [e.rows[0].budget] and e.a_better == [e.rows[-1].budget]
    assert max(e.b_better) < e.crossover.budget <= min(e.a_better)


def test_cheap_model_with_retries_against_a_strong_model_once(demo):
    db, ids = demo
    result = seqk.compare(ids["cheap"], ids["strong"], db)
    assert result.differs["metric"] == ("seq@k", "pass@k") and result.differs["chains"] == (4, 1)
    assert result.differs["actor.model"][1] == "mock/py:benchmarks.clbench.demo:strong"
    assert result.differs["feedback_mode"] == ("binary", None)
    assert result.a.chains == 4 and [x.t for x in result.at_t] == [1]
    check_at_t(db, result, ("seq@k", "pass@k"))
    assert result.at_t[0].difference.high < 0  # once, the strong model is better
    check_flips(db, result)
    assert {f.chain_index for f in result.flips.a_only} - {1}  # chains beyond the first solve some
    # at the strong model's price of one answer the cheap model's best cell (chains of retries) is ahead
    mine = check_equal_budget(db, result)
    [row] = result.equal_budget.rows
    assert (row.b.width, row.b.depth) == (1, 1) and row.budget == pytest.approx(row.b.spend)
    assert row.a.width > 1 and row.band[0] > 0 and result.equal_budget.a_better == [row.budget]
    assert mine["rows"][0]["band"][0] > 0


def test_json_is_the_interface_of_the_issue(demo):
    db, ids = demo
    out = runner.invoke(app, ["compare", ids["critic_sharp"], ids["critic_vague"], "--db", str(db),
                              "--format", "json"])
    assert out.exit_code == 0, out.output
    body = json.loads(out.stdout)
    assert {"a", "b", "differs", "n_shared", "at_t", "flips"} <= set(body)
    assert body["a"] == ids["critic_sharp"] and body["n_shared"] == 60
    assert body["differs"]["critic.model"] == ["mock/py:benchmarks.clbench.demo:critic_sharp",
                                               "mock/py:benchmarks.clbench.demo:critic_vague"]
    point = body["at_t"][2]
    assert set(point) >= {"t", "a", "b", "difference", "p_value"} and set(point["difference"]) == {
        "value", "low", "high"}
    result = api.compare(ids["critic_sharp"], ids["critic_vague"], db)
    assert body["flips"]["a_only"] == [f.task_index for f in result.flips.a_only]
    assert body["flips"]["b_only"] == []
    budget = body["equal_budget"]
    assert {"unit", "points", "crossover"} <= set(budget) and budget["unit"] == "US$"
    assert len(budget["points"]) == len(result.equal_budget.rows)
    for point, row in zip(budget["points"], result.equal_budget.rows, strict=True):
        assert {"budget", "a", "b", "difference", "band"} <= set(point)
        assert point["a"]["cell"] == {"width": row.a.width, "depth": row.a.depth}
        assert point["a"]["value"] == row.a.value and point["b"]["value"] == row.b.value
        assert point["difference"] == {"value": row.difference.value, "low": row.difference.low,
                                       "high": row.difference.high}
        assert point["band"] == {"low": row.band[0], "high": row.band[1]}
    x = result.equal_budget.crossover
    assert budget["crossover"] == {"budget": x.budget, "before": "b", "low": x.low, "high": x.high,
                                   "established": True}
    mixed = [(point, row) for point, row in zip(budget["points"], result.equal_budget.rows, strict=True)
             if row.b.mixed]
    assert mixed  # the frontier mixes two cells between its vertices: the JSON says which, and the share
    for point, row in mixed:
        assert point["b"]["mix"] == {"width": row.b.mixed[0], "depth": row.b.mixed[1], "share": row.b.mixed[2]}
        assert 0 < point["b"]["mix"]["share"] < 1 and point["b"]["spend"] == pytest.approx(point["budget"])
    first = body["flipped"][0]
    assert first["inspect"] == f"seqk inspect {ids['critic_sharp']} --task-index {first['task_index']} --db {db}"


def test_the_table_names_what_differs_first_then_the_figures_and_flips(demo):
    db, ids = demo
    out = runner.invoke(app, ["compare", "*critic_sharp", "*critic_vague", "--db", str(db), "--max-flips", "2"])
    assert out.exit_code == 0, out.output
    text = out.stdout
    assert text.index("what differs (a | b):") < text.index("a − b at each t") < text.index("flips")
    assert "critic.model   mock/py:benchmarks.clbench.demo:critic_sharp" in text
    result = api.compare(ids["critic_sharp"], ids["critic_vague"], db)
    x = result.at_t[1]
    assert f"{x.difference.value:+.3f} [{x.difference.low:+.3f}, {x.difference.high:+.3f}]" in text
    n = len(result.flips.a_only)
    assert f"{n} solved by a only, 0 by b only" in text
    # the command a reader pastes names the run as they did
    f = result.flips.a_only[0]
    assert f"task {f.task_index} {f.task_id} · at attempt {f.attempt_index} · seqk inspect '*critic_sharp' " \
           f"--task-index {f.task_index} --db {db}" in text
    assert f"… {n - 2} more" in text
    # 28.3: the smallest difference these tasks detect, by the exact power `seqk plan` uses
    from seqk.power import detectable_lift, discordance_upper_limit

    last = result.at_t[-1]
    n_tasks = last.difference.n
    expected = detectable_lift(n_tasks, discordance_upper_limit(last.discordance * n_tasks, n_tasks))
    assert f"{n_tasks} tasks detect {expected:.2f} at t = {last.t} with 80% power" in text


def test_free_runs_are_compared_in_tokens_and_the_table_says_why(tmp_path, db):
    """28.1: a local or free model costs $0; spend per task in US$ would read $0 against $0."""
    from scripts import solves_on

    from seqk import models

    models.register_mock("mock/alpha", solves_on({1: 1, 2: 2}))
    free = {"price": {"input": 0.0, "output": 0.0}}
    a = make_run(tmp_path, db, model="mock/alpha", actor=free).run_id
    b = make_run(tmp_path, db, model="mock/alpha", feedback_mode="none", actor=free).run_id
    out = runner.invoke(app, ["compare", a, b, "--db", str(db)])
    assert out.exit_code == 0, out.output
    assert "spend per task up to t (tokens," in out.stdout and "$0" not in out.stdout
    assert "(in tokens: a run here cost nothing, a local or free model" in out.stdout


def test_runs_of_different_slices_or_the_same_run_are_refused_in_one_line(demo, tmp_path):
    shared, ids = demo
    db = tmp_path / "copy.duckdb"
    shutil.copyfile(shared, db)
    toy = make_run(tmp_path, db, model="mock/wrong").run_id
    with pytest.raises(BadInput, match="runs of different benchmarks are not compared"):
        seqk.compare(ids["cheap"], toy, db)
    out = runner.invoke(app, ["compare", ids["cheap"], toy, "--db", str(db)])
    assert out.exit_code == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "are not the same tasks" in out.stderr
    spicy = make_run(tmp_path, db, model="mock/wrong", options={"n": 3, "flavour": "spicy"}).run_id
    sliced = runner.invoke(app, ["compare", toy, spicy, "--db", str(db)])
    assert sliced.exit_code == 2 and sliced.stderr == (
        f"error: {toy} is a run of slice toy-plain, {spicy} of toy-spicy: runs of different slices are not "
        "compared (their tasks are not the same tasks)\n")
    same = runner.invoke(app, ["compare", ids["cheap"], "*cheap/*/binary", "--db", str(db)])
    assert same.exit_code == 2 and "name the same run" in same.stderr
    missing = runner.invoke(app, ["compare", ids["cheap"], "nope/*", "--db", str(db)])
    assert missing.exit_code == 2 and "no run matches 'nope/*'" in missing.stderr


def test_unpriced_runs_compare_tokens_of_one_model_and_refuse_tokens_of_two(tmp_path, db):
    from scripts import solves_on

    from seqk import models

    models.register_mock("mock/alpha", solves_on({1: 1, 2: 2, 3: 3}))
    models.register_mock("mock/beta", solves_on({1: 2, 2: 1, 3: 1}))
    binary = make_run(tmp_path, db, model="mock/alpha", chains=2).run_id
    hint = make_run(tmp_path, db, model="mock/alpha", feedback_mode="hint").run_id
    beta = make_run(tmp_path, db, model="mock/beta", metric="pass@k").run_id
    same = seqk.compare(binary, hint, db).equal_budget
    assert same.unit == "tokens" and same.refusal is None and same.rows
    assert "both runs pay the same models" in (same.unit_reason or "")
    refused = seqk.compare(binary, beta, db).equal_budget
    assert refused.unit is None and refused.rows == [] and refused.crossover is None
    out = runner.invoke(app, ["compare", binary, beta, "--db", str(db)])
    assert out.exit_code == 0, out.output
    assert ("at equal spend per task: not compared at equal budget: a call of these runs has no price and their "
            "models differ, so their tokens are not the same money") in out.stdout
    body = json.loads(runner.invoke(app, ["compare", binary, beta, "--db", str(db), "--format", "json"]).stdout)
    assert body["equal_budget"]["unit"] is None and body["equal_budget"]["points"] == []
    assert "not the same money" in body["equal_budget"]["refusal"]


def test_a_task_whose_outcome_an_error_hides_is_no_flip_unless_errors_count_as_failures(tmp_path, db):
    from scripts import solves_on, word_of

    from seqk import models
    from seqk.errors import PermanentProviderError

    def flaky(prompt: str) -> str:
        if word_of(prompt) == "w1":
            raise PermanentProviderError("400 bad request", status_code=400)
        return "wrong"

    models.register_mock("mock/alpha", solves_on({1: 1, 2: 2}))
    models.register_mock("mock/flaky", flaky)
    a = make_run(tmp_path, db, model="mock/alpha").run_id
    b = make_run(tmp_path, db, model="mock/flaky").run_id
    hidden = seqk.compare(a, b, db)
    assert [f.task_index for f in hidden.flips.a_only] == [2]  # b's task 1 is not known to be unsolved
    assert (hidden.flips.n_unsettled, hidden.flips.n_neither, hidden.flips.n_both) == (1, 1, 0)
    assert any("not settled" in n or "not known yet" in n for n in hidden.notes)
    # the errors leave a range on each a − b, printed under the table
    x = hidden.at_t[0]
    assert x.shows_range and x.if_failures is not None and x.if_successes is not None
    text = runner.invoke(app, ["compare", a, b, "--db", str(db)]).stdout
    assert (f"a − b if errors were failures / successes: t=1 {x.if_failures:+.3f} / "
            f"{x.if_successes:+.3f}") in text
    counted = seqk.compare(a, b, db, errors_as_failures=True)
    assert [(f.task_index, f.attempt_index) for f in counted.flips.a_only] == [(1, 1), (2, 2)]
    assert counted.flips.n_unsettled == 0
