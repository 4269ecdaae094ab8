"""Figures remembered between reports (seqk.analysis.memo): a report read from the cache is the
report computed, a change to a run's rows computes that run's figures again and no other, and a
damaged, unwritable or switched-off cache only means computing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import synthetic_db, write_variant

from seqk.analysis import frontier, memo, metrics
from seqk.analysis import report as report_module
from seqk.analysis.report import report, to_json
from seqk.config import runspec
from seqk.run import engine
from seqk.view.verdict import verdicts


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """bench/make_synthetic_db.py's world, small: 5 runs (pass@k, seq@k with four feedback modes, a
    critic among them), 60 tasks, K = 4, errored attempts, priced calls: every block kind."""
    return synthetic_db(tmp_path_factory.mktemp("synth") / "synth.duckdb", models=1, tasks=60, k=4)


def computed(db: Path, monkeypatch: pytest.MonkeyPatch, **kwargs) -> str:
    """The report as JSON with the cache off."""
    with monkeypatch.context() as m:
        m.setenv("SEQK_FIGURE_CACHE", "0")
        return to_json(report((), db, compare=True, **kwargs))


def forbid_estimators(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every estimator the cache stands in for fails when called."""
    def fails(*args, **kwargs):
        raise AssertionError("an estimator ran where its figure was remembered")

    monkeypatch.setattr(metrics, "_seq_bootstrap", fails)
    monkeypatch.setattr(metrics, "compare_chains", fails)
    monkeypatch.setattr(frontier, "compare_at_equal_spend", fails)


def forbid_computing(*args, **kwargs):
    raise AssertionError("a report was computed where it was remembered")


def figures(text: str) -> dict:
    """What the cache stands in for, from a report's JSON: every run's delta, egs, lgs, lift,
    framing and curve intervals, and every equal-budget block."""
    data = json.loads(text)
    assert data["equal_budget"] and data["runs"], "the world has equal-budget blocks and runs"
    return data


def test_a_report_read_from_the_cache_is_the_report_computed(synth, cache, monkeypatch):
    expected = computed(synth, monkeypatch)
    assert not cache.exists()
    first = to_json(report((), synth, compare=True))
    kinds = sorted({p.name.split("-")[0] for p in cache.glob("*.pickle")})
    assert kinds == ["equal", "paired", "report", "run", "seq"]  # "run-rows": seqk.analysis.inputs
    forbid_estimators(monkeypatch)
    with monkeypatch.context() as m:  # the whole report read back: nothing of it is computed
        m.setattr(report_module, "_computed", forbid_computing)
        again = to_json(report((), synth, compare=True))
    assert figures(first) == figures(expected)
    assert again == first
    for whole in cache.glob("report-*.pickle"):  # without it: computed, every figure read back
        whole.unlink()
    assert to_json(report((), synth, compare=True)) == first
    # the viewer's verdicts read the same figures: nothing is computed for them either
    found = verdicts(synth)
    data = figures(first)
    lifts = {r["run_id"]: r["lift"] for r in data["runs"] if r.get("lift")}
    assert found and lifts
    for run_id, verdict in found.items():
        if run_id in lifts:
            assert verdict.lift.difference.value == pytest.approx(lifts[run_id]["difference"]["value"], abs=0)


def test_another_seed_or_reading_of_errors_is_another_figure(synth, cache, monkeypatch):
    report((), synth, compare=True)

    def kept() -> tuple[int, int]:
        """(figures, runs' rows) in the folder."""
        names = [p.name for p in cache.glob("*.pickle")]
        rows = sum(name.startswith("run-rows") for name in names)
        return len(names) - rows, rows

    n, rows = kept()
    assert rows == 3 * len(json.loads(to_json(report((), synth, compare=True)))["runs"])  # chains, spend, curve
    for kwargs in ({"seed": 7}, {"errors_as_failures": True}):
        assert to_json(report((), synth, compare=True, **kwargs)) == computed(synth, monkeypatch, **kwargs)
    # the rows a seed does not shape are the same rows; errors' reading shapes the curves
    assert kept() == (3 * n, rows + rows // 3)


def test_a_run_that_gains_attempts_computes_its_figures_again_and_no_other(tmp_path, db, cache, monkeypatch):
    from helpers import register_mock_models

    register_mock_models()
    variants = {}
    for model in ("mock/alpha", "mock/beta"):
        for metric in ("pass@k", "seq@k"):
            name = f"{model.split('/')[1]}-{metric[:-2]}.yaml"
            variants[name] = write_variant(tmp_path, name, benchmark="toy", metric=metric, k=3, model=model,
                                           options={"n": 5})
            engine.run(runspec.load(variants[name]), db)
    report((), db, compare=True)
    ran: list[str] = []
    original = metrics._seq_bootstrap

    def counted(run_id, *args, **kwargs):
        ran.append(run_id)
        return original(run_id, *args, **kwargs)

    monkeypatch.setattr(metrics, "_seq_bootstrap", counted)
    report((), db, compare=True)
    assert ran == []
    # alpha's seq@k run extended to K = 4: its chains change, beta's do not
    extended = write_variant(tmp_path, "alpha-seq.yaml", benchmark="toy", metric="seq@k", k=4, model="mock/alpha",
                             options={"n": 5}, **{"continue": True})
    alpha = engine.run(runspec.load(extended), db)
    assert alpha.attempts_written > 0
    warm = to_json(report((), db, compare=True))
    assert ran == [alpha.prepared.run_id]
    assert warm == computed(db, monkeypatch)


def test_a_damaged_or_unwritable_cache_only_means_computing(synth, cache, tmp_path, monkeypatch):
    expected = to_json(report((), synth, compare=True))
    [whole] = cache.glob("report-*.pickle")
    whole.write_bytes(whole.read_bytes()[:-7])  # the report truncated: its figures are read
    files = sorted(set(cache.glob("*.pickle")) - {whole})
    files[0].write_bytes(b"")  # empty
    files[1].write_bytes(files[1].read_bytes()[:40])  # truncated in its header
    files[2].write_bytes(files[2].read_bytes()[:-7])  # truncated in its figure
    files[3].write_bytes(files[4].read_bytes())  # another figure's file
    assert to_json(report((), synth, compare=True)) == expected
    assert all(f.read_bytes().startswith(memo._MAGIC) and len(f.read_bytes()) > 100 for f in files[:4] + [whole])
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # its "seqk" folder cannot be made
    assert to_json(report((), synth, compare=True)) == expected


def test_switched_off_nothing_is_kept_and_the_folder_is_pruned_to_its_limit(synth, cache, monkeypatch):
    monkeypatch.setenv("SEQK_FIGURE_CACHE", "0")
    report((), synth, compare=True)
    assert not cache.exists()
    monkeypatch.setenv("SEQK_FIGURE_CACHE", "1")
    report((), synth, compare=True)
    before = set(cache.glob("*.pickle"))
    assert len(before) > 3
    monkeypatch.setattr(memo, "MAX_FILES", 3)
    monkeypatch.setattr(memo, "_PRUNED", False)
    for rows in cache.glob("run-rows*.pickle"):  # the same under any seed: read again, so written first
        rows.unlink()
    before = set(cache.glob("*.pickle"))
    # new figures: the process's first write prunes the folder to 3, the least recently used first
    report((), synth, compare=True, seed=11)
    after = set(cache.glob("*.pickle"))
    assert len(after - before) == len(before) + 3 * 5  # the new report's figures and rows, every one kept
    assert len(after & before) == 2  # with the first written, the 3 most recently used


def test_a_key_changes_with_any_row_of_a_run():
    import numpy as np

    from seqk.analysis.survival import RunChains

    def chains(**changes) -> RunChains:
        base = dict(run_id="r", metric="seq@k", k=2, chains=1, priced=True, task_index=np.arange(3),
                    keys=np.array(["0/a", "1/b", "2/c"]), task_of=np.arange(3), n_valid=np.array([1, 2, 2]),
                    n_success=np.array([1, 0, 1]), n_error=np.zeros(3, dtype=int),
                    first_success=np.array([1, 0, 2]), valid_prefix=np.array([1, 2, 2]),
                    settled_prefix=np.array([1, 2, 2]), events={"censored": np.array([1, 0, 2])},
                    censored={"censored": np.array([-1, -1, -1])}, cost=np.ones((3, 2)),
                    tokens=np.ones((3, 2)), valid_cost=np.ones(3), valid_tokens=np.ones(3))
        return RunChains(**(base | changes))

    same = chains().fingerprint
    assert chains().fingerprint == same
    assert chains(cost=np.array([[1, 1], [1, 1], [1, 1.0000001]])).fingerprint != same
    assert chains(keys=np.array(["0/a", "1/b", "2/d"])).fingerprint != same
    assert chains(events={"censored": np.array([1, 0, 1])}).fingerprint != same
    assert memo.digest("seq", chains(), 7) != memo.digest("seq", chains(), 8)
    assert memo.digest(["a", "b"]) != memo.digest(["ab"]) != memo.digest(("a", "b"))


def test_seqk_compare_reads_its_figures_from_the_cache_too(synth, cache, monkeypatch):
    from seqk.analysis import compare, compare_budget, paired

    ids = [r["run_id"] for r in json.loads(computed(synth, monkeypatch))["runs"]]
    seq_run = next(i for i in ids if "/seqk/" in i and "hint" in i)
    pass_run = next(i for i in ids if "/passk/" in i)
    with monkeypatch.context() as m:
        m.setenv("SEQK_FIGURE_CACHE", "0")
        expected = compare.to_json(compare.compare(seq_run, pass_run, synth))
    first = compare.to_json(compare.compare(seq_run, pass_run, synth))

    def fails(*args, **kwargs):
        raise AssertionError("an estimator ran where its figure was remembered")

    forbid_estimators(monkeypatch)
    monkeypatch.setattr(paired, "compare_chains", fails)
    monkeypatch.setattr(compare_budget, "compare_runs", fails)
    again = compare.to_json(compare.compare(seq_run, pass_run, synth))
    assert json.loads(again)["equal_budget"]["points"] and json.loads(again)["at_t"]
    # the figures read back are the figures computed; the curves' points come from the SQL, whose
    # parallel sums (DuckDB's threads, --run-slow) can move their last bit from one read to the next
    assert same_numbers(json.loads(again), json.loads(first))
    assert same_numbers(json.loads(first), json.loads(expected))
    for key in ("at_t", "equal_budget"):  # read back from the cache: bit for bit what was kept
        assert json.loads(again)[key] == json.loads(first)[key]


def same_numbers(a, b, rel: float = 1e-12) -> bool:
    """Two JSON values equal but for floats within `rel` of each other."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same_numbers(a[k], b[k], rel) for k in a)
    if isinstance(a, list):
        return (isinstance(b, list) and len(a) == len(b)
                and all(same_numbers(x, y, rel) for x, y in zip(a, b, strict=True)))
    if isinstance(a, float) and isinstance(b, float):
        return a == b or abs(a - b) <= rel * max(abs(a), abs(b))
    return a == b


def test_a_run_digest_changes_with_any_row_a_report_reads_and_only_that_runs(synth, tmp_path):
    """run_digests, the whole report's check: a row added to attempts, calls, tasks or
    rejudged_slots, a run event, a changed kept chain or a migration moves the digest of the run
    it touches (every run's, for schema_info), no other."""
    import shutil

    import duckdb

    from seqk import store
    from seqk.store import queries

    db = tmp_path / "digests.duckdb"
    shutil.copy(synth, db)
    with store.connect(db) as con:
        ids = [r["run_id"] for r in queries.report_runs(con, run_ids=None, benchmark=None, model=None)]
    run = ids[0]

    def digests() -> dict:
        """The report's key per run: its run_fingerprints row and its run_digests row."""
        with store.connect(db, read_only=True) as con:
            prints = {r["run_id"]: r for r in queries.run_fingerprints(con, run_ids=ids)}
            return {r["run_id"]: (prints[r["run_id"]], r) for r in queries.run_digests(con, run_ids=ids)}

    changes = [
        "INSERT INTO attempts SELECT * REPLACE ('copy-' || attempt_uid AS attempt_uid) FROM attempts "
        "WHERE run_id = $run LIMIT 1",
        "INSERT INTO calls SELECT * FROM calls WHERE run_id = $run LIMIT 1",
        "INSERT INTO tasks SELECT * REPLACE (task_index + 100000 AS task_index) FROM tasks WHERE run_id = $run LIMIT 1",
        "INSERT INTO rejudged_slots VALUES ($run, 0, 1, $run, 'x')",
        "UPDATE chain_kept SET spent_usd = spent_usd + 1e-9 WHERE run_id = $run "
        "AND task_index = (SELECT min(task_index) FROM chain_kept WHERE run_id = $run)",
        "UPDATE chain_kept SET last_finished_at = last_finished_at + INTERVAL 1 SECOND WHERE run_id = $run "
        "AND task_index = (SELECT min(task_index) FROM chain_kept WHERE run_id = $run)",
        "INSERT INTO run_events (run_id, event, k, generation, config, event_at) "
        "SELECT $run, 'extend', k + 1, NULL, config, now()::TIMESTAMP FROM runs WHERE run_id = $run",
    ]
    def prints() -> dict:
        """The viewer's cheaper key (run_fingerprints): the kept chains and the runs row only."""
        with store.connect(db, read_only=True) as con:
            return {r["run_id"]: r["fingerprint"] for r in queries.run_fingerprints(con, run_ids=ids)}

    before, printed = digests(), prints()
    assert len(before) == len(ids) and all(p["n_chains"] > 0 for p, _ in before.values())
    for sql in changes:
        con = duckdb.connect(str(db))
        con.execute(sql, {"run": run})
        con.close()
        after = digests()
        assert after[run] != before[run], sql
        assert {i: after[i] for i in ids if i != run} == {i: before[i] for i in ids if i != run}, sql
        if "chain_kept" in sql or "run_events" in sql:  # what the viewer's fingerprint reads
            now = prints()
            assert now[run] != printed[run], sql
            assert {i: now[i] for i in ids if i != run} == {i: printed[i] for i in ids if i != run}, sql
            printed = now
        before = after
    con = duckdb.connect(str(db))
    con.execute("INSERT INTO schema_info SELECT 'a later migration', '1'")
    con.close()
    after = digests()
    assert all(after[i][1]["schema_info"] != before[i][1]["schema_info"] for i in ids)


def test_a_report_asked_again_after_a_call_is_added_is_computed_again(synth, cache, tmp_path, monkeypatch):
    """The whole report is never read back over rows it was not computed from: a priced call
    added to one run (its spend, not its outcomes) is in the report asked again."""
    import shutil

    import duckdb

    db = tmp_path / "calls.duckdb"
    shutil.copy(synth, db)
    first = to_json(report((), db, compare=True))
    con = duckdb.connect(str(db))
    con.execute("INSERT INTO calls SELECT * REPLACE (cost_usd + 5 AS cost_usd) FROM calls "
                "WHERE role = 'actor' AND cost_usd IS NOT NULL LIMIT 1")
    con.close()
    again = to_json(report((), db, compare=True))
    assert again != first
    assert again == computed(db, monkeypatch)


def test_a_pass_run_added_as_another_candidate_is_in_the_report_asked_again(tmp_path, db, cache, monkeypatch):
    """A pass@k run that is a candidate partner but not the chosen one (k = 4 beside a k = 3
    partner of a seq@3 run) changes no run the report reads, only the count of candidates it
    prints: the report asked again says so."""
    from helpers import register_mock_models

    register_mock_models()
    seq_id = ""
    for name, metric, k, tag in (("seq.yaml", "seq@k", 3, None), ("pass.yaml", "pass@k", 3, None),
                                 ("pass4.yaml", "pass@k", 4, "k4")):
        if tag:  # the seq@k run alone (its partner read with it), before the other candidate
            first = json.loads(to_json(report((seq_id,), db)))
        ran = engine.run(runspec.load(write_variant(tmp_path, name, benchmark="toy", metric=metric, k=k,
                                                    model="mock/alpha", options={"n": 5},
                                                    **({"tag": tag} if tag else {}))), db)
        if metric == "seq@k":
            seq_id = ran.prepared.run_id
    again = to_json(report((seq_id,), db))
    assert [r["n_pass_candidates"] for r in first["runs"]] == [1]
    assert [r["n_pass_candidates"] for r in json.loads(again)["runs"]] == [2]
    with monkeypatch.context() as m:
        m.setenv("SEQK_FIGURE_CACHE", "0")
        assert again == to_json(report((seq_id,), db))
