"""Each run's rows remembered under its digests (seqk.analysis.inputs): read alone they are the rows
read beside every other run, kept they come back bit for bit, and a report after one run changed
reads that run's rows from the store and no other's."""

from __future__ import annotations

import shutil
from dataclasses import fields, replace
from pathlib import Path

import duckdb
import numpy as np
import pytest
from helpers import synthetic_db

from seqk import store
from seqk.analysis import inputs
from seqk.analysis.report import report, to_json
from seqk.analysis.survival import RunChains, read_chains
from seqk.store import queries


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """bench/make_synthetic_db.py's world, small: pass@k and seq@k runs of two models, errors,
    priced calls, several chains where the synthetic runs have them."""
    return synthetic_db(tmp_path_factory.mktemp("synth") / "synth.duckdb", models=2, tasks=40, k=4)


def run_ids(db: Path) -> list[str]:
    with store.connect(db, read_only=True) as con:
        return [r["run_id"] for r in queries.report_runs(con, run_ids=None, benchmark=None, model=None)]


def same_arrays(a: RunChains, b: RunChains) -> None:
    """Every field of a and b equal, arrays by dtype, shape and bytes."""
    for f in fields(RunChains):
        if f.name == "curves":
            continue
        x, y = getattr(a, f.name), getattr(b, f.name)
        pairs = [(x[p], y[p]) for p in x] if isinstance(x, dict) else [(x, y)]
        if isinstance(x, dict):
            assert x.keys() == y.keys(), f.name
        for u, v in pairs:
            if isinstance(u, np.ndarray):
                assert (u.dtype, u.shape) == (v.dtype, v.shape), f.name
                assert u.tobytes() == v.tobytes(), f.name
            else:
                assert u == v, f.name


def test_each_runs_rows_read_alone_are_its_rows_read_beside_every_run(synth):
    """What keying each run's rows by its own digests rests on: chain_rows, spend_by_role and
    run_curves of one run are its rows of the query over every run, bit for bit."""
    ids = run_ids(synth)
    assert len(ids) >= 4
    with store.connect(synth, read_only=True) as con:
        together = read_chains(con, ids)
        spend = queries.spend_by_role(con, run_ids=ids)
        curves = {e: queries.run_curves(con, errors_as_failures=e, run_ids=ids) for e in (False, True)}
        for run_id in ids:
            (alone,) = read_chains(con, [run_id]).values()
            same_arrays(alone, together[run_id])
            assert alone.fingerprint == together[run_id].fingerprint
            assert queries.spend_by_role(con, run_ids=[run_id]) == [r for r in spend if r["run_id"] == run_id]
            for e, rows in curves.items():
                mine = [r for r in rows if r["run_id"] == run_id]
                assert mine and repr(queries.run_curves(con, errors_as_failures=e, run_ids=[run_id])) == repr(mine)


def test_a_packed_run_comes_back_bit_for_bit(synth):
    """pack/unpack over the synthetic runs and over arrays built to reach every branch: integers
    at each width's edges, floats float32 holds and floats it does not (few distinct values, some
    0.0 and -0.0, a NaN; and more than 65,536 distinct), keys with a non-ASCII character, empty
    arrays. The fingerprint kept is the fingerprint computed again."""
    with store.connect(synth, read_only=True) as con:
        found = list(read_chains(con, run_ids(synth)).values())
    rng = np.random.default_rng(3)
    base = found[0]
    n = len(base.task_of)
    odd = replace(
        base,
        task_index=np.r_[np.int64(2**40), np.zeros(n - 1, dtype=np.int64)][:len(base.task_index)],
        n_valid=np.full(n, -128, dtype=np.int64), n_success=np.full(n, 32767, dtype=np.int64),
        n_error=np.r_[np.int64(-2**31), np.zeros(n - 1, dtype=np.int64)],
        events={p: np.zeros(n, dtype=np.int64) for p in base.events},
        cost=np.where(np.arange(base.cost.size).reshape(base.cost.shape) == 0, np.nan,
                      np.where(rng.random(base.cost.shape) < 0.5, -0.0, 0.1)),
        tokens=rng.random(base.tokens.shape) * 3, valid_cost=rng.random(n) / 7,
        keys=np.array([f"{i}/é" for i in range(len(base.keys))]))
    assert -0.0 in odd.cost and np.signbit(odd.cost).any() and np.isnan(odd.cost).any()
    for chains in [*found, odd]:
        packed = inputs.pack(chains)
        back = inputs.unpack(packed)
        same_arrays(back, chains)
        fresh = replace(back)  # a RunChains made again: its fingerprint computed, not carried
        assert "fingerprint" not in fresh.__dict__
        assert back.fingerprint == fresh.fingerprint == chains.fingerprint
        kept = inputs.KeptChains(packed)  # as read back from the cache folder: unpacked when used
        assert kept.fingerprint == chains.fingerprint and kept.run_id == chains.run_id
        assert kept._unpacked is None
        same_arrays(kept, chains)  # type: ignore[arg-type]
        assert kept._unpacked is not None and kept.n_tasks == chains.n_tasks
        assert np.array_equal(kept.per_task(chains.n_valid), chains.per_task(chains.n_valid))
    kinds = {name: value[1] for name, value in inputs.pack(odd).items() if isinstance(value, tuple)}
    assert kinds["n_valid"] == "|i1" and kinds["n_success"] == "<i2" and kinds["n_error"] == "<i4"
    assert kinds["task_index"] == "<i8" and kinds["cost"] == "table" and kinds["keys"].startswith("<U")
    assert kinds["tokens"] == "table"  # random doubles, but no more than 65,536 of them
    many = rng.random(70_000)  # more: kept as they are
    assert inputs._narrow(many)[1] == "<f8" and inputs._widened(inputs._narrow(many)).tobytes() == many.tobytes()
    halves = np.arange(70_000) / 2  # float32 holds them
    assert inputs._narrow(halves)[1] == "<f4" and inputs._widened(inputs._narrow(halves)).tobytes() == halves.tobytes()
    empty = inputs._narrow(np.zeros(0, dtype=np.int64))
    assert inputs._widened(empty).dtype == np.int64
    zeros = np.array([0.0, -0.0, 0.0, -0.0] * 10)  # one value to np.unique: kept as it is
    assert inputs._widened(inputs._narrow(zeros)).tobytes() == zeros.tobytes()


def test_a_report_after_one_run_changed_reads_that_runs_rows_and_no_other(synth, cache, tmp_path, monkeypatch):
    db = tmp_path / "one-more.duckdb"
    shutil.copy(synth, db)
    first = to_json(report((), db, compare=True))
    ids = run_ids(db)
    assert len(list(cache.glob("run-rows*chains-*.pickle"))) == len(ids)
    read: dict[str, list[list[str]]] = {"chains": [], "spend": [], "curves": []}
    for name, query in (("chains", "chain_rows"), ("spend", "spend_by_role"), ("curves", "run_curves")):
        original = getattr(queries, query)

        def counted(con, *args, _name=name, _original=original, **kwargs):
            read[_name].append(sorted(kwargs["run_ids"]))
            return _original(con, *args, **kwargs)

        monkeypatch.setattr(queries, query, counted)
    unpacked: list[str] = []
    original_unpack = inputs.unpack

    def counted_unpack(packed):
        unpacked.append(packed["run_id"])
        return original_unpack(packed)

    monkeypatch.setattr(inputs, "unpack", counted_unpack)
    for whole in cache.glob("report-*.pickle"):  # the report itself not remembered: its rows are
        whole.unlink()
    assert to_json(report((), db, compare=True)) == first
    assert read == {"chains": [], "spend": [], "curves": []}
    assert unpacked == []  # every figure remembered: the chains' fingerprints key them, no array is read
    # one run gains a priced call and a chain's kept row changes: its rows are read again, alone
    changed = ids[1]
    con = duckdb.connect(str(db))
    con.execute("INSERT INTO calls SELECT * REPLACE (cost_usd + 5 AS cost_usd) FROM calls "
                "WHERE run_id = $run AND cost_usd IS NOT NULL LIMIT 1", {"run": changed})
    con.execute("UPDATE chain_kept SET spent_usd = spent_usd + 5 WHERE run_id = $run "
                "AND task_index = (SELECT min(task_index) FROM chain_kept WHERE run_id = $run)", {"run": changed})
    con.close()
    again = to_json(report((), db, compare=True))
    assert again != first
    assert read == {"chains": [[changed]], "spend": [[changed]], "curves": [[changed]]}
    monkeypatch.setenv("SEQK_FIGURE_CACHE", "0")
    assert again == to_json(report((), db, compare=True))


def test_a_re_judging_runs_rows_are_read_again_when_a_run_it_grades_changes(synth, tmp_path):
    db = tmp_path / "rejudge.duckdb"
    shutil.copy(synth, db)
    ids = run_ids(db)
    judging, graded = ids[0], ids[2]

    def keys() -> dict:
        with store.connect(db, read_only=True) as con:
            return inputs.run_keys(con, ids)[0]

    con = duckdb.connect(str(db))
    con.execute("INSERT INTO rejudged_slots VALUES ($run, 0, 1, $source, 'x')", {"run": judging, "source": graded})
    con.close()
    before = keys()
    con = duckdb.connect(str(db))
    con.execute("INSERT INTO attempts SELECT * REPLACE ('copy-' || attempt_uid AS attempt_uid) FROM attempts "
                "WHERE run_id = $run LIMIT 1", {"run": graded})
    con.close()
    after = keys()
    assert after[graded] != before[graded] and after[judging] != before[judging]
    assert {i: after[i] for i in ids if i not in (judging, graded)} == {
        i: before[i] for i in ids if i not in (judging, graded)}


def test_seqk_compare_asked_again_reads_no_rows_and_after_a_change_only_the_changed_runs(
        synth, cache, tmp_path, monkeypatch):
    from seqk.analysis import compare

    db = tmp_path / "compare.duckdb"
    shutil.copy(synth, db)
    ids = run_ids(db)
    seq_run = next(i for i in ids if "/seqk/" in i and "hint" in i)
    pass_run = next(i for i in ids if "/passk/" in i and i.split("/")[2] == seq_run.split("/")[2])
    first = compare.to_json(compare.compare(seq_run, pass_run, db))
    read: list[tuple[str, list[str]]] = []
    for query in ("chain_rows", "spend_by_role", "run_curves", "compare_solved"):
        original = getattr(queries, query)

        def counted(con, *args, _name=query, _original=original, **kwargs):
            asked = kwargs.get("run_ids") or [kwargs["run_a"], kwargs["run_b"]]
            read.append((_name, sorted(asked)))
            return _original(con, *args, **kwargs)

        monkeypatch.setattr(queries, query, counted)
    assert compare.to_json(compare.compare(seq_run, pass_run, db)) == first
    assert read == []
    con = duckdb.connect(str(db))  # the pass@k run gains a priced call: its spend moves
    con.execute("INSERT INTO calls SELECT * REPLACE (cost_usd + 5 AS cost_usd) FROM calls "
                "WHERE run_id = $run AND cost_usd IS NOT NULL LIMIT 1", {"run": pass_run})
    con.close()
    again = compare.to_json(compare.compare(seq_run, pass_run, db))
    assert again != first
    assert sorted(read) == sorted([("chain_rows", [pass_run]), ("spend_by_role", [pass_run]),
                                   ("run_curves", [pass_run]), ("compare_solved", sorted([seq_run, pass_run]))])
    monkeypatch.setenv("SEQK_FIGURE_CACHE", "0")
    assert again == compare.to_json(compare.compare(seq_run, pass_run, db))
