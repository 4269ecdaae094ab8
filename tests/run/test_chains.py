"""`chains: n`: n independent seq@k chains per task, run concurrently with seeds distinct per
(chain, attempt); raised later like tasks added, never lowered; `chains: 1` is today's run."""

from __future__ import annotations

import itertools
from math import comb
from pathlib import Path

import duckdb
import pytest
from helpers import rows, write_variant
from typer.testing import CliRunner

from seqk import store
from seqk.cli import app
from seqk.config import runspec
from seqk.run import engine
from seqk.store import queries

SEQ = dict(metric="seq@k", k=3, model="mock/py:scripts:seeded_coin", seed=7, options={"n": 12})


def chains_variant(tmp_path: Path, **keys) -> Path:
    return write_variant(tmp_path, **(SEQ | keys))


def test_chains_run_each_task_n_times_with_distinct_seeds(tmp_path: Path, db: Path):
    spec = runspec.load(chains_variant(tmp_path, chains=4))
    result = engine.run(spec, db)
    assert result.tasks_passed + result.tasks_failed == 12  # a task is done once, all chains ended
    got = rows(db, "SELECT task_index, chain_index, attempt_index, success FROM attempts ORDER BY ALL")
    assert {(t, c) for t, c, _, _ in got} == set(itertools.product(range(1, 13), range(1, 5)))
    for _slot, group in itertools.groupby(got, key=lambda r: r[:2]):
        outcomes = [r[3] for r in group]
        # each chain stops at its first success, or after K attempts
        assert outcomes == [False] * (len(outcomes) - 1) + [outcomes[-1]]
        assert outcomes[-1] or len(outcomes) == 3
    # the chains of a task really sample anew: they do not all end the same way
    by_task = {}
    for task, chain, attempt, success in got:
        by_task.setdefault(task, set()).add((chain, attempt, success))
    assert any(len({(a, s) for _, a, s in v}) > 1 for v in by_task.values())
    # the calls carry the chain of their attempt
    assert rows(db, "SELECT count(*) FROM calls c JOIN attempts a USING (attempt_uid) "
                    "WHERE c.chain_index <> a.chain_index") == [(0,)]


def independent_frontier(db: Path, run_id: str, k: int, chains: int) -> dict:
    """(width, depth) -> mean value, from the raw attempts table, by subsets of chains."""
    raw = rows(db, "SELECT task_index, chain_index, attempt_index, success FROM attempts "
                   "WHERE run_id = ? AND status = 'ok'", [run_id])
    firsts: dict[int, dict[int, int | None]] = {}
    for task, chain, attempt, success in raw:
        first = firsts.setdefault(task, {}).setdefault(chain, None)
        if success and (first is None or attempt < first):
            firsts[task][chain] = attempt
    out = {}
    for w, d in itertools.product(range(1, chains + 1), range(1, k + 1)):
        values = []
        for chain_firsts in firsts.values():
            solved = [f is not None and f <= d for f in chain_firsts.values()]
            subsets = list(itertools.combinations(solved, w))
            values.append(sum(any(s) for s in subsets) / len(subsets))
        out[(w, d)] = sum(values) / len(values)
    return out


def test_a_four_chain_run_and_its_pass_partner_give_the_frontier_of_the_raw_attempts(tmp_path, db):
    seq = runspec.load(chains_variant(tmp_path, chains=4))
    partner = runspec.load(write_variant(tmp_path, "p.yaml", **(SEQ | {"metric": "pass@k", "k": 12})))
    engine.run(seq, db)
    engine.run(partner, db)
    expected = independent_frontier(db, seq.run_id, 3, 4)
    with store.connect(db, read_only=True) as con:
        got = queries.frontier_rows(con, errors_as_failures=False, run_ids=[seq.run_id, partner.run_id])
        partners = queries.budget_partners(con, run_ids=[seq.run_id])
    cells = {(r["width"], r["depth"]): r["value"] for r in got if r["run_id"] == seq.run_id}
    assert cells == pytest.approx(expected, abs=1e-12)
    passed = rows(db, "SELECT task_index, count(*) FILTER (WHERE success) FROM attempts "
                      "WHERE run_id = ? GROUP BY ALL", [partner.run_id])
    for r in (r for r in got if r["run_id"] == partner.run_id):
        # w chains of samples, each stopping at its first success within d: w d samples' chance
        m = r["width"] * r["depth"]
        chen = sum(1 - comb(12 - c, m) / comb(12, m) for _, c in passed) / 12
        assert r["value"] == pytest.approx(chen, abs=1e-12)
    assert [(p["pass_run_id"], p["pass_k"]) for p in partners] == [(partner.run_id, 12)]


def test_raising_chains_from_2_to_4_keeps_the_first_two_and_lowering_is_refused(tmp_path, db):
    engine.run(runspec.load(chains_variant(tmp_path, chains=2)), db)
    before = rows(db, "SELECT attempt_uid, chain_index FROM attempts ORDER BY ALL")
    assert {c for _, c in before} == {1, 2}
    spec4 = runspec.load(chains_variant(tmp_path, chains=4))
    assert spec4.fingerprint() == runspec.load(chains_variant(tmp_path, chains=2)).fingerprint()
    result = engine.run(spec4, db)
    assert result.prepared.previous_chains == 2 and result.prepared.action == "resume"
    after = rows(db, "SELECT attempt_uid, chain_index FROM attempts ORDER BY ALL")
    assert set(before) <= set(after)
    assert {uid for uid, c in after if c <= 2} == {uid for uid, _ in before}  # chains 1-2 not re-run
    assert {c for _, c in after} == {1, 2, 3, 4}
    assert rows(db, "SELECT chains, generation FROM runs") == [(4, 1)]

    out = CliRunner().invoke(app, ["run", str(chains_variant(tmp_path, chains=3)), "--db", str(db),
                                   "--no-export"])
    assert out.exit_code == 2
    assert "error:" in out.output and "chains=4" in out.output and "chains=3 is fewer" in out.output
    assert rows(db, "SELECT count(*) FROM attempts") == [(len(after),)]


def test_chains_is_for_seq_at_k(tmp_path, db):
    path = write_variant(tmp_path, **(SEQ | {"metric": "pass@k", "chains": 2}))
    out = CliRunner().invoke(app, ["run", str(path), "--db", str(db), "--no-export"])
    assert out.exit_code == 2 and "chains" in out.output and "seq@k" in out.output
    assert not db.exists() or rows(db, "SELECT count(*) FROM runs") == [(0,)]


def test_one_chain_runs_exactly_as_before(tmp_path, db):
    with_key = runspec.load(chains_variant(tmp_path, chains=1))
    without = runspec.load(chains_variant(tmp_path))
    assert with_key.run_id == without.run_id and with_key.fingerprint() == without.fingerprint()
    engine.run(without, db)
    assert rows(db, "SELECT DISTINCT chain_index FROM attempts") == [(1,)]
    # chain 1 keeps the seeds a one-chain run has always had (seqk.seeds); chain 2 gets its own
    from seqk import seeds
    from seqk.run.metering import seeded

    chain_1 = [seeded(without.actor, 5, t, True).seed for t in (1, 2, 3)]
    assert chain_1 == [seeds.seed_for(7, 5, 1, t, "actor") for t in (1, 2, 3)]
    assert seeded(without.actor, 5, 1, True, chain_index=2).seed not in chain_1


def test_the_folder_tree_holds_chain_1_and_parquet_every_chain(tmp_path, db):
    spec = runspec.load(chains_variant(tmp_path, chains=3))
    engine.run(spec, db)
    out = CliRunner().invoke(app, ["export", spec.run_id, "--db", str(db), "--to", str(tmp_path / "tree")])
    assert out.exit_code == 0, out.output
    # the user is told which chain the tree holds and where the others are
    assert "chain 1 of 3" in out.output and "--parquet" in out.output
    files = list((tmp_path / "tree").rglob("attempt-*.json"))
    chain1 = rows(db, "SELECT count(*) FROM attempts WHERE chain_index = 1")[0][0]
    assert len(files) == chain1 < rows(db, "SELECT count(*) FROM attempts")[0][0]
    out = CliRunner().invoke(app, ["export", spec.run_id, "--db", str(db), "--parquet", str(tmp_path / "pq")])
    assert out.exit_code == 0, out.output
    files = [str(f) for f in (tmp_path / "pq").rglob("*.parquet") if "attempts" in str(f)]
    got = duckdb.sql(f"SELECT DISTINCT chain_index FROM read_parquet({files}) ORDER BY 1").fetchall()
    assert got == [(1,), (2,), (3,)]


@pytest.mark.slow
def test_a_chains_run_killed_midway_resumes_to_the_uninterrupted_result(tmp_path):
    from procs import arc_variant, start_run, stopped_midway

    variant = arc_variant(tmp_path, chains=4, model="mock/py:scripts:slow_seeded_arc", seed=7,
                          max_tasks=24)
    reference = tmp_path / "reference.duckdb"
    assert start_run(variant, reference).wait(timeout=180) == 0
    killed = tmp_path / "killed.duckdb"
    stopped_midway(variant, killed, tmp_path, after=12)
    total = rows(reference, "SELECT count(*) FROM attempts")[0][0]
    assert 12 <= rows(killed, "SELECT count(*) FROM attempts")[0][0] < total, "the kill should land mid-run"
    resumed = start_run(variant, killed)
    _, err = resumed.communicate(timeout=180)
    assert resumed.returncode == 0 and "resuming" in err, err
    slots = ("SELECT task_index, chain_index, attempt_index, success, feedback FROM current_attempts "
             "ORDER BY ALL")
    assert rows(killed, slots) == rows(reference, slots)
    assert rows(killed, "SELECT count(*) FROM (SELECT task_index, chain_index, attempt_index "
                        "FROM attempts WHERE status = 'ok' GROUP BY ALL HAVING count(*) > 1)") == [(0,)]
    frontier = "SELECT run_id, width, depth, value, n_tasks, n_left_out, tokens_per_task FROM frontier"
    for got, want in zip(rows(killed, frontier), rows(reference, frontier), strict=True):
        assert got[:3] == want[:3] and got[4:6] == want[4:6]
        assert got[3] == pytest.approx(want[3], abs=1e-12) and got[6] == pytest.approx(want[6])
