"""The run list's equal-budget chart: for each seq@k run with a budget partner, the cells it plots
are those of `seqk report --compare`'s pass@m block (seqk.analysis.frontier), whether the run has
one chain per task or several (frontier_of: errors censor a chain); a run without a partner has
none; and the chart is drawn as inline SVG with every line and point."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from recompute import _vertices

from seqk import store, view
from seqk.analysis.frontier import equal_budget
from seqk.view import render

T0 = datetime(2026, 1, 1)


def _run(con, run_id: str, metric: str, k: int, chains: int, actor: str = "mock/a") -> None:
    con.execute(
        "INSERT INTO run_rows (run_id, benchmark, slice, metric, k, chains, generation, feedback_mode, "
        "actor_model, verifier, fingerprint, fingerprint_fields, created_at, updated_at, seqk_version) "
        "VALUES (?, 'toy', 'toy-plain', ?, ?, ?, 1, 'binary', ?, 'deterministic', 'fp', '{}', ?, ?, 'test')",
        [run_id, metric, k, chains, actor, T0, T0])
    con.execute("INSERT INTO tasks SELECT ?, t, 'task-' || t, 'prompt ' || t, 'h' || t, '{}' "
                "FROM range(1, 13) r(t)", [run_id])


def _attempt(rows: dict[str, list[list]], n: int, run_id: str, task: int, chain: int, slot: int, status: str,
             success: bool | None, cost: float | None, tokens: int) -> None:
    at = T0 + timedelta(seconds=n)
    uid = f"u{n}"
    rows["attempts"].append([uid, run_id, task, chain, slot, status, success, at, at])
    rows["calls"].append([uid, run_id, task, chain, slot, tokens, cost, at])


def _write(con, rows: dict[str, list[list]]) -> None:
    """The rows, in the order they were made: one INSERT a table from an Arrow table (binding
    parameters row by row took most of a build), with the values every row shares."""
    import pyarrow as pa

    keys = ("attempt_uid", "run_id", "task_index", "chain_index", "attempt_index")
    for table, columns, same in (
            ("attempts", (*keys, "status", "success", "started_at", "finished_at"), {"generation": "1", "k": "4"}),
            ("calls", (*keys, "input_tokens", "cost_usd", "started_at"),
             {"generation": "1", "call_index": "1", "role": "'actor'", "model": "'mock/a'", "output_tokens": "3",
              "retries": "0"})):
        found = rows[table]
        con.register("new_rows", pa.table({name: [row[i] for row in found] for i, name in enumerate(columns)}))
        con.execute(f"INSERT INTO {table} ({', '.join([*columns, *same])}) "
                    f"SELECT *, {', '.join(same.values())} FROM new_rows")
        con.unregister("new_rows")


def build(path: Path, seed: int, *, priced: bool = True) -> None:
    """seq (one chain; errors that stop a chain, so some tasks are left out at later depths),
    chains (three chains; some errors retried), their pass@k budget partner (holes: samples
    that errored), and lonely (another actor: no partner)."""
    rng = random.Random(seed)
    n = 0
    rows: dict[str, list[list]] = {"attempts": [], "calls": []}
    with store.connect(path) as con:
        for run_id, metric, k, chains, actor in (("seq", "seq@k", 4, 1, "mock/a"), ("chains", "seq@k", 4, 3, "mock/a"),
                                                  ("pass", "pass@k", 6, 1, "mock/a"),
                                                  ("lonely", "seq@k", 4, 1, "mock/b")):
            _run(con, run_id, metric, k, chains, actor)
            for task in range(1, 13):
                p = rng.random()
                for chain in range(1, rng.randint(1, chains) + 1):
                    for slot in range(1, k + 1):
                        n += 1
                        cost = round(rng.random(), 3) if priced else None
                        # an error ends seq's task 1 at attempt 2: it is left out from depth 2 on
                        if rng.random() < 0.12 or (run_id, task, slot) == ("seq", 1, 2):
                            _attempt(rows, n, run_id, task, chain, slot, "error", None, cost, 5)
                            if run_id == "chains" and rng.random() < 0.5:
                                n += 1  # retried: the slot's valid row follows its error
                            elif metric == "seq@k":
                                break
                            else:
                                continue
                        success = rng.random() < p and (run_id, task) != ("seq", 1)
                        _attempt(rows, n, run_id, task, chain, slot, "ok", success, cost, rng.randint(5, 60))
                        if metric == "seq@k" and success:
                            break
        _write(con, rows)
        store.rebuild_kept_chains(con)  # rows written by SQL, not through store.append_attempts


@pytest.mark.parametrize(("seed", "priced"), [(1, True), (2, True), (3, False)])
def test_budget_chart_plots_the_reports_equal_budget_cells(tmp_path: Path, seed: int, priced: bool):
    db = tmp_path / "b.duckdb"
    build(db, seed, priced=priced)
    page = view.runs_page(db)
    assert set(page.budgets) == {"seq", "chains"}  # lonely has no pass@k run of its actor
    with store.connect(db, read_only=True) as con:
        expected = {b.seq_run_id: b for b in equal_budget(con, ["seq", "chains"], n_boot=10)
                    if b.partner == "resample_until_success"}
    for seq_run_id, chart in page.budgets.items():
        want = expected[seq_run_id]
        assert (chart.pass_run_id, chart.pass_k, chart.unit) == ("pass", 6, "US$" if priced else "tokens")
        got = sorted((("pass@k" if line.is_pass else f"seq@k depth {p.depth}"), p.width, p.depth, p.value, p.spend)
                     for line in chart.lines for p in line.points)
        # the partner drawn as its frontier: the vertices of the upper concave envelope of its cells,
        # which the report's block compares at (the lines between them are the mixtures)
        until = {(c["width"], c["depth"]): c for c in want.cells if c["series"] == "resample until success"}
        partner = [until[key] | {"series": "pass@k"}
                   for key in _vertices({key: (c["value"], c["spend"]) for key, c in until.items()})]
        cells = sorted((c["series"], c["width"], c["depth"], c["value"], c["spend"])
                       for c in partner + [c for c in want.cells if c["series"].startswith("seq@k")])
        assert any(c["depth"] > 1 for c in partner)  # it stops: cells deeper than pass@m's
        assert [g[:3] for g in got] == [c[:3] for c in cells]
        assert [x for g in got for x in g[3:]] == pytest.approx([x for c in cells for x in c[3:]], rel=1e-9)
    # one chain per task: a line over depths; several: a line per depth over widths
    assert [line.label for line in page.budgets["seq"].lines] == [
        "resample until success (pass@6's samples)", "seq@k, depth 1..4"]
    assert len(page.budgets["chains"].lines) == 5
    # some chain of seq is censored by an error: its cells are no plain means (errors censor)
    with store.connect(db, read_only=True) as con:
        assert con.execute("SELECT count(*) FROM chain_outcomes_of(run_ids := ['seq']) "
                           "WHERE censored_at IS NOT NULL").fetchone()[0] > 0


def test_budget_chart_is_drawn_on_the_run_list_with_each_line_and_point(tmp_path: Path):
    db = tmp_path / "b.duckdb"
    build(db, 1)
    page = view.runs_page(db)
    html = render.render_runs(page, render.Urls())
    assert html.count('<figure class="budget"') == 2
    assert '<figure class="budget" data-seq-run="seq"' in html
    assert '<figure class="budget" data-seq-run="lonely"' not in html
    chart = page.budgets["seq"]
    n_points = sum(len(line.points) for line in chart.lines)
    figure = html[html.index('<figure class="budget" data-seq-run="seq"'):]
    figure = figure[:figure.index("</figure>")]
    assert figure.count("<circle") == n_points and figure.count("<polyline") == 2
    assert "resample until success (pass@6&#x27;s samples)" in figure and "per task" in figure


def test_run_page_rows_agree_with_the_attempts_that_count(tmp_path: Path):
    """The run page reads its cells and spend for its page's tasks only: on runs with several
    chains, retried errors and holes, they are current_attempts_of's slots and current_calls'
    sums, and the filters count every task."""
    db = tmp_path / "b.duckdb"
    build(db, 2)
    with store.connect(db, read_only=True) as con:
        for run_id in ("seq", "chains", "pass"):
            slots = con.execute(
                "SELECT task_index, attempt_index, status, success FROM current_attempts_of(run_ids := [$r]) "
                "ORDER BY ALL", {"r": run_id}).fetchall()
            spend = dict(con.execute(
                "SELECT task_index, sum(cost_usd) FROM current_calls WHERE run_id = $r GROUP BY ALL",
                {"r": run_id}).fetchall())
            page = view.run_page(run_id, db)
            got = sorted((t.task_index, c.i, c.status, c.success) for t in page.tasks for c in t.cells)
            assert got == slots and page.n_matching == 12
            for t in page.tasks:
                assert t.cost_usd == pytest.approx(spend.get(t.task_index))
                mine = [s for s in slots if s[0] == t.task_index]
                assert t.n_error == sum(1 for s in mine if s[2] == "error")
                assert t.first_success == min((s[1] for s in mine if s[2] == "ok" and s[3]), default=None)
            errored = view.run_page(run_id, db, filter="errored")
            assert [t.task_index for t in errored.tasks] == [t.task_index for t in page.tasks if t.n_error]


def _recomputed(con) -> dict[str, dict]:
    """Each run's spend from its attempts and calls (Python over plain rows, never seqk's views):
    the calls of the current generation's chains that have an attempt (those `seqk status`
    counts), every one whatever its slot's fate."""
    runs = {r[0]: r[1] for r in con.execute("SELECT run_id, generation FROM runs").fetchall()}
    chains = {(run_id, task, chain) for run_id, gen, task, chain in con.execute(
        "SELECT run_id, generation, task_index, chain_index FROM attempts").fetchall() if runs[run_id] == gen}
    calls = [c for c in con.execute(
        "SELECT run_id, generation, task_index, chain_index, input_tokens, output_tokens, cost_usd, error FROM calls"
        ).fetchall() if runs[c[0]] == c[1] and (c[0], c[2], c[3]) in chains]
    out = {}
    for run_id in runs:
        mine = [c for c in calls if c[0] == run_id]
        costs = [c[6] for c in mine if c[6] is not None]
        out[run_id] = {"input_tokens": sum(c[4] or 0 for c in mine), "output_tokens": sum(c[5] or 0 for c in mine),
                       "cost_usd": sum(costs) if costs else None,
                       "n_unpriced_calls": sum(1 for c in mine if c[6] is None and c[7] is None),
                       "n_failed_calls": sum(1 for c in mine if c[7] is not None)}
    return out


@pytest.mark.parametrize("world", ["budget1", "budget3", "random1", "random2", "random3", "random4", "view_db"])
def test_run_list_spend_is_the_calls_of_the_kept_chains(tmp_path: Path, world: str):
    """view_runs reads chain_kept only (tests/store/test_chain_kept.py); its spend (tokens, cost,
    unpriced and failed calls) is what a recomputation from the calls gives, on runs with errors
    that end a chain or are superseded, holes, an older generation, unpriced calls, calls without
    token counts, calls whose attempt was never written and failed calls (view_db: real mock runs,
    a provider refusing one task's first attempt)."""
    from random_runs import random_db

    db = tmp_path / "w.duckdb"
    if world == "view_db":
        import view_db
        from toybench import register_toys

        register_toys()
        view_db.build(tmp_path, db)
    elif world.startswith("budget"):
        build(db, int(world[-1]), priced=world != "budget3")
    else:
        random_db(db, int(world[-1]))
    with store.connect(db, read_only=True) as con:
        got = {r.run_id: r for r in view.pages._summaries(con, None)}
        want = _recomputed(con)
    assert got.keys() == want.keys()
    for run_id, w in want.items():
        r = got[run_id]
        assert (r.input_tokens, r.output_tokens, r.n_unpriced_calls, r.n_failed_calls) == (
            w["input_tokens"], w["output_tokens"], w["n_unpriced_calls"], w["n_failed_calls"]), run_id
        assert (r.cost_usd is None) == (w["cost_usd"] is None), run_id
        assert w["cost_usd"] is None or r.cost_usd == pytest.approx(w["cost_usd"], rel=1e-12), run_id
    assert any(w["cost_usd"] is not None for w in want.values()) or world == "budget3"
    assert any(w["n_failed_calls"] for w in want.values()) == (world == "view_db")
