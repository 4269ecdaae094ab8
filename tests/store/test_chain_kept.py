"""The table chain_kept, each chain's outcome kept as its attempts are written (issue 30): after
every way a store's attempts change (runs with errors, a resume that redoes them, a run killed
mid-write and resumed, a k-extension, chains, a restart, a rejudge, an import) its rows equal an
independent recomputation from the attempts and calls (Python, below; never seqk's SQL), on a
DuckDB file and on a lake (a store of the schema before the calls' columns is upgraded to it, on
both); and the report's main queries and the viewer's run list never scan the attempts or calls
tables."""

from __future__ import annotations

import json
import math
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import judge_says, write_variant
from procs import Gate, arc_variant, start_run, status
from scripts import solves_on

from seqk import models, store
from seqk.config import runspec
from seqk.io import export, importing
from seqk.models.role import RoleSpec
from seqk.run import engine
from seqk.run.rejudge import rejudge, rejudge_spec

KEPT = ("run_id, generation, task_index, chain_index, n_attempts, n_valid, n_error, n_success, first_success, "
        "first_error, valid_prefix, settled_prefix, ended_in_error, last_finished_at, cost_usd, tokens, "
        "valid_cost_usd, valid_tokens, priced, input_tokens, output_tokens, spent_usd, n_unpriced_calls, "
        "n_failed_calls, spend_by_slot, slot_best")


def recomputed(con) -> dict[tuple, tuple]:
    """Each (run, generation, task, chain) with an attempt, from the attempts and calls as stored: a
    slot counts its valid row, else its errors; spend is every call of a valid slot."""
    slots: dict[tuple, dict[int, dict]] = {}
    for run_id, gen, task, chain, index, status_, success, score, finished in con.execute(
            "SELECT run_id, generation, task_index, chain_index, attempt_index, status, success, score, "
            "finished_at FROM attempts").fetchall():
        slot = slots.setdefault((run_id, gen, task, chain), {}).setdefault(
            index, {"valid": False, "solved": False, "at": finished, "score": None})
        slot["valid"] |= status_ == "ok"
        slot["solved"] |= status_ == "ok" and bool(success)
        slot["at"] = max(slot["at"], finished)
        if status_ == "ok":
            slot["score"] = score if score is not None else None if success is None else float(success)
    spend: dict[tuple, dict[int, list]] = {}
    paid_all: dict[tuple, list] = {}
    for run_id, gen, task, chain, index, cost, tokens_in, tokens_out, error in con.execute(
            "SELECT run_id, generation, task_index, chain_index, attempt_index, cost_usd, input_tokens, "
            "output_tokens, error FROM calls").fetchall():
        spend.setdefault((run_id, gen, task, chain), {}).setdefault(index, []).append(
            (cost, (tokens_in or 0) + (tokens_out or 0)))
        paid_all.setdefault((run_id, gen, task, chain), []).append((tokens_in, tokens_out, cost, error))
    out = {}
    for key, by_index in slots.items():
        indexes = sorted(by_index)
        valid = [i for i in indexes if by_index[i]["valid"]]

        def prefix(present: list[int]) -> int:
            n = 0
            while n < len(present) and present[n] == n + 1:
                n += 1
            return n

        paid = spend.get(key, {})
        costs = [c for i in valid for c in [[x for x, _ in paid.get(i, []) if x is not None]]]
        slot_cost = [sum(c) if c else None for c in costs]
        slot_tokens = [sum(t for _, t in paid.get(i, [])) for i in valid]
        n_valid_prefix = prefix(valid)
        out[key] = (
            len(indexes), len(valid), len(indexes) - len(valid),
            sum(by_index[i]["solved"] for i in indexes),
            min((i for i in indexes if by_index[i]["solved"]), default=None),
            min((i for i in indexes if not by_index[i]["valid"]), default=None),
            n_valid_prefix, prefix(indexes), not by_index[indexes[-1]]["valid"],
            max(s["at"] for s in by_index.values()),
            slot_cost[:n_valid_prefix], slot_tokens[:n_valid_prefix],
            sum(c for c in slot_cost if c is not None), sum(slot_tokens),
            any(x is not None for calls in paid.values() for x, _ in calls),
            *_totals(paid_all.get(key, [])),
            [{"i": i, "cost_usd": sum(c) if (c := [x for x, _ in paid[i] if x is not None]) else None,
              "tokens": sum(t for _, t in paid[i])} for i in sorted(paid)],
            _running_best([by_index[i]["score"] for i in indexes], indexes),
        )
    return out


def _totals(calls: list[tuple]) -> tuple:
    """Every call's input and output tokens and cost summed (None when none has one), how many
    returned without a price and how many failed."""
    def total(values: list) -> float | int | None:
        present = [v for v in values if v is not None]
        return sum(present) if present else None

    return (total([c[0] for c in calls]), total([c[1] for c in calls]), total([c[2] for c in calls]),
            sum(1 for c in calls if c[2] is None and c[3] is None), sum(1 for c in calls if c[3] is not None))


def _running_best(scores: list, indexes: list[int]) -> list[dict]:
    best, out = 0.0, []
    seen = False
    for index, score in zip(indexes, scores, strict=True):
        if score is not None:
            best = score if not seen else max(best, score)
            seen = True
        out.append({"i": index, "b": best})
    return out


def _close(a, b) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[key], b[key]) for key in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)
    return a == b


def assert_kept(where) -> int:
    """chain_kept equals the recomputation (and seqk's own check agrees); returns its rows."""
    with store.connect(where, read_only=True) as con:
        kept = {tuple(r[:4]): tuple(r[4:]) for r in con.execute(f"SELECT {KEPT} FROM chain_kept").fetchall()}
        want = recomputed(con)
        assert store.kept_chains_differ(con) == 0
    assert kept.keys() == want.keys()
    for key, row in want.items():
        assert _close(list(kept[key]), list(row)), (key, kept[key], row)
    return len(kept)


def _variant(tmp_path, name: str, **keys) -> Path:
    keys = {"benchmark": "toyjudge", "model": "mock/actor", "judge_model": "mock/judge",
            "retry": {"max_retries": 0, "base_delay_s": 0.0}} | keys
    return write_variant(tmp_path, name, **keys)


# the lake case starts PostgreSQL and S3 (a fixture asked for at run time, which the slow rule in
# conftest.py cannot see): slow by hand
@pytest.fixture(params=["file", pytest.param("lake", marks=pytest.mark.slow)])
def where(request, tmp_path):
    if request.param == "file":
        return tmp_path / "seqk.duckdb"
    return request.getfixturevalue("lake_url")


def test_the_kept_outcomes_follow_errors_resume_extension_chains_restart_rejudge_and_import(tmp_path, where):
    models.register_mock("mock/actor", solves_on({1: 1, 2: 2, 3: 3}))
    models.register_mock("mock/critic", lambda p: "Look again.")
    models.register_mock("mock/judge", lambda p: "maybe?" if "word w3?" in p else judge_says(p))
    seq = _variant(tmp_path, "seq.yaml", metric="seq@k", k=2, chains=2, feedback_mode="critic",
                   critic_model="mock/critic", options={"n": 5})
    first = engine.run(runspec.load(seq), where)
    assert first.tasks_error
    n = assert_kept(where)

    models.register_mock("mock/judge", judge_says)
    engine.run(runspec.load(seq), where)  # a resume: the errored attempts are redone, superseded
    assert assert_kept(where) == n
    with store.connect(where, read_only=True) as con:
        assert con.execute("SELECT count(*) FROM chain_kept WHERE n_error = 0 AND run_id = ?",
                           [first.prepared.run_id]).fetchone()[0] == n

    seq3 = _variant(tmp_path, "seq.yaml", metric="seq@k", k=3, chains=3, feedback_mode="critic",
                    critic_model="mock/critic", options={"n": 5}, **{"continue": True})
    assert engine.run(runspec.load(seq3), where).prepared.action == "extend"  # k and chains raised
    assert assert_kept(where) > n
    seq4 = _variant(tmp_path, "seq.yaml", metric="seq@k", k=4, chains=3, feedback_mode="critic",
                    critic_model="mock/critic", options={"n": 5}, **{"continue": False})
    assert engine.run(runspec.load(seq4), where).prepared.action == "restart"
    assert_kept(where)
    with store.connect(where, read_only=True) as con:
        generations = con.execute("SELECT DISTINCT generation FROM chain_kept WHERE run_id = ? ORDER BY 1",
                                  [first.prepared.run_id]).fetchall()
        shown = con.execute("SELECT count(*), max(k) FROM chain_outcomes_of(run_ids := [?])",
                            [first.prepared.run_id]).fetchone()
    assert generations == [(1,), (2,)] and shown == (5 * 3, 4)  # the current generation's chains only

    models.register_mock("mock/judge", lambda p: "maybe?" if "word w2?" in p else judge_says(p))
    passk = _variant(tmp_path, "pass.yaml", metric="pass@k", k=3, options={"n": 4})
    source = engine.run(runspec.load(passk), where)
    assert source.tasks_error
    assert_kept(where)
    models.register_mock("mock/judge2", lambda p: "YES")
    judge = RoleSpec(role="judge", model="mock/judge2", temperature=0.0)
    rejudge(rejudge_spec(source.prepared.run_id, judge, db=where), where)
    assert_kept(where)
    with store.connect(where, read_only=True) as con:
        assert con.execute("SELECT count(*) FROM chain_kept WHERE run_id LIKE '%rejudge%'").fetchone()[0] == 4

    export.export_runs([], where, to=tmp_path / "out")
    fresh = tmp_path / "fresh.duckdb"
    importing.import_tree(tmp_path / "out", fresh)
    assert assert_kept(fresh) > 0
    # the pass@k runs come back whole (an exported seq@k run keeps only its first chain today)
    query = "SELECT * EXCLUDE (run_no) FROM chain_outcomes WHERE metric = 'pass@k' ORDER BY ALL"
    with store.connect(fresh, read_only=True) as a, store.connect(where, read_only=True) as b:
        imported = a.execute(query).fetchall()
        assert len(imported) == 8 and imported == b.execute(query).fetchall()


def _wait_for_valid(where, proc, at_least: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        result = status(where)
        rows = json.loads(result.stdout) if result.returncode == 0 and result.stdout.strip() else []
        if rows and rows[0]["n_valid_attempts"] >= at_least:
            return
        time.sleep(0.05)
    raise AssertionError(f"the run ended or stalled before {at_least} attempts")


@pytest.mark.slow
def test_a_run_killed_mid_write_then_resumed_keeps_exact_outcomes(tmp_path, where):
    variant = arc_variant(tmp_path)
    with Gate(tmp_path, after=15) as gate:  # it writes 15 attempts, then holds until killed
        proc = start_run(variant, where, gate)
        _wait_for_valid(where, proc, 15)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    killed = assert_kept(where)
    assert killed > 0
    resumed = start_run(variant, where)
    _, err = resumed.communicate(timeout=180)
    assert resumed.returncode == 0, err
    assert assert_kept(where) >= killed


def test_a_store_from_before_the_table_keeps_its_chains_on_upgrade(tmp_path):
    """The migration's backfill: a schema-9 file with attempts but no chain_kept is given one."""
    db = tmp_path / "old.duckdb"
    models.register_mock("mock/actor", solves_on({1: 1, 2: 2}))
    models.register_mock("mock/judge", judge_says)
    engine.run(runspec.load(_variant(tmp_path, "seq.yaml", metric="seq@k", k=3, options={"n": 4})), db)
    import duckdb

    with duckdb.connect(str(db)) as con:
        con.execute("DROP TABLE chain_kept")
        con.execute("UPDATE schema_info SET value = '9' WHERE key = 'schema_version'")
    with store.connect(db) as con:
        assert con.execute("SELECT count(*) FROM chain_kept").fetchone()[0] == 4
    assert assert_kept(db) == 4


def _actor_failing_on_w3(prompt: str) -> str:
    """solves_on({1: 1, 2: 2})'s answers, but every request about w3 fails for good (a failed call)."""
    from seqk.errors import PermanentProviderError

    if "w3" in prompt:
        raise PermanentProviderError("503 overloaded, for good")
    return solves_on({1: 1, 2: 2})(prompt)


def test_a_store_from_before_the_calls_columns_keeps_its_chains_afresh_on_upgrade(tmp_path, where):
    """Migration 11, on a file and on a lake: a schema-10 store (chain_kept without n_failed_calls
    and spend_by_slot, its rows kept) is given the new table, every chain kept again."""
    from seqk.store import lake, schema, sqlfiles

    models.register_mock("mock/actor", _actor_failing_on_w3)
    models.register_mock("mock/judge", judge_says)
    engine.run(runspec.load(_variant(tmp_path, "seq.yaml", metric="seq@k", k=3, options={"n": 4})), where)
    flavour = schema.FILE if isinstance(where, Path) else schema.LAKE
    with store.connect(where) as con:  # back to schema 10, as seqk wrote it
        con.execute("CREATE TEMP TABLE kept_10 AS "
                    "SELECT * EXCLUDE (n_failed_calls, spend_by_slot) FROM chain_kept")
        con.execute("DROP TABLE chain_kept")
        con.execute(flavour.tables(sqlfiles.migrations()[9][2]))
        con.execute("INSERT INTO chain_kept BY NAME SELECT * FROM kept_10")
        con.execute("DROP TABLE kept_10")
        con.execute("DELETE FROM schema_info WHERE key = 'schema_version'")
        con.execute("INSERT INTO schema_info VALUES ('schema_version', '10')")
    lake.close_all()
    with store.connect(where) as con:  # a writer's open upgrades
        assert con.execute("SELECT count(*), sum(n_failed_calls) > 0, bool_and(len(spend_by_slot) > 0) "
                           "FROM chain_kept").fetchone() == (4, True, True)
    assert assert_kept(where) == 4


def _scanned(node: dict) -> Iterator[str]:
    """The table of each scan in the plan below `node`, once per scan."""
    info = node.get("extra_info", {})
    if isinstance(info, dict) and "Table" in info:
        yield info["Table"].rsplit(".", 1)[-1]
    for child in node.get("children", []):
        yield from _scanned(child)


def _scans(node: dict, table: str) -> int:
    """How many times the plan below `node` scans `table`."""
    return sum(name == table for name in _scanned(node))


def _tables(node: dict, found: set[str]) -> set[str]:
    found.update(_scanned(node))
    return found


def test_the_reports_main_queries_read_the_kept_outcomes_not_the_attempts(tmp_path):
    """EXPLAIN of run curves, the per-chain rows, the frontier, status's progress and spend,
    compare's flips and per-task values and the viewer's run list (its progress, spend, curve and
    budget curve): no scan of attempts or calls (status and the run list: a single scan of
    chain_kept), whatever the store holds (here runs with errors and chains); the viewer's task
    table reads its spend from chain_kept, never the calls (its cells and its search read the
    attempts of the page's tasks)."""
    from seqk.store import sqlfiles

    db = tmp_path / "seqk.duckdb"
    models.register_mock("mock/actor", solves_on({1: 1, 2: 2}))
    models.register_mock("mock/judge", lambda p: "maybe?" if "word w3?" in p else judge_says(p))
    seq = engine.run(runspec.load(_variant(tmp_path, "seq.yaml", metric="seq@k", k=3, chains=2,
                                           options={"n": 4})), db)
    passk = engine.run(runspec.load(_variant(tmp_path, "pass.yaml", metric="pass@k", k=3, options={"n": 4})), db)
    ids = [seq.prepared.run_id, passk.prepared.run_id]
    both = {"errors_as_failures": False, "run_ids": ids}
    with store.connect(db, read_only=True) as con:
        for name, params in [("run_curves", both), ("run_curves", both | {"errors_as_failures": True}),
                             ("chain_rows", {"run_ids": ids}), ("frontier_rows", both),
                             ("run_status", {"run_ids": []}), ("run_status", {"run_ids": ids[:1]}),
                             # `seqk compare`'s flips and the ranking's per-task values
                             ("compare_solved", {"errors_as_failures": False, "run_a": ids[0], "run_b": ids[1]}),
                             ("compare_solved", {"errors_as_failures": True, "run_a": ids[0], "run_b": ids[1]}),
                             ("task_values_at", {"errors_as_failures": False, "run_ids": ids, "t": 2}),
                             # the viewer's run list and a run page's header
                             ("view_runs", {"run_ids": None}), ("view_runs", {"run_ids": ids})]:
            plan = con.execute("EXPLAIN (FORMAT json) " + sqlfiles.queries()[name].sql, params).fetchall()
            read = set().union(*(_tables(node, set()) for node in json.loads(plan[0][1])))
            assert "chain_kept" in read and not read & {"attempts", "calls"}, (name, read)
            assert con.execute(sqlfiles.queries()[name].sql, params).fetchall(), name
            if name in ("run_status", "view_runs"):
                # progress, spend and (the viewer's) curve from one pass over the kept chains
                # (chain_tally_of), not one pass each
                assert sum(_scans(node, "chain_kept") for node in json.loads(plan[0][1])) == 1, name
        for filter_ in ("all", "errored"):
            params = {"run_id": ids[0], "seq_run_id": ids[0], "pass_run_id": ids[1], "filter": filter_,
                      "search": "", "upto": None, "limit": 100, "offset": 0}
            plan = con.execute("EXPLAIN (FORMAT json) " + sqlfiles.queries()["view_run_tasks"].sql,
                               params).fetchall()
            read = set().union(*(_tables(node, set()) for node in json.loads(plan[0][1])))
            assert {"chain_kept", "attempts"} <= read and "calls" not in read, read
            assert con.execute(sqlfiles.queries()["view_run_tasks"].sql, params).fetchall()
        plan = con.execute("EXPLAIN (FORMAT json) SELECT count(*) FROM frontier").fetchall()
        read = set().union(*(_tables(node, set()) for node in json.loads(plan[0][1])))
        assert "chain_kept" in read and not read & {"attempts", "calls"}
        # the views over attempts stay for ad-hoc SQL, and do read them
        plan = con.execute("EXPLAIN (FORMAT json) SELECT count(*) FROM current_attempts").fetchall()
        assert "attempts" in set().union(*(_tables(node, set()) for node in json.loads(plan[0][1])))
