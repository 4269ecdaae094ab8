"""The limit an endpoint sustained is remembered in the store, per (api_base, model): a later run
against it starts there instead of slow-starting from 4, still backs off on 429, never stores a
secret from the api_base, and forgets it on `seqk limits --reset`. Against a loopback server that
counts the calls in flight (tests/servers.py CountingServer); nothing here waits on a clock."""

from __future__ import annotations

import duckdb
import pytest
from helpers import rows, write_variant
from servers import CountingServer
from typer.testing import CliRunner

from seqk import store
from seqk.cli import app
from seqk.config import runspec
from seqk.models.limiter import DEFAULT_START
from seqk.run import engine, limits
from seqk.store import queries

N = 48
"""Tasks of each run (pass@k, k=1, all at once): the model's ceiling is max(48 x 1, 16) = 48."""


def run(tmp_path, db, api_base: str, tag: str, **keys):
    variant = write_variant(tmp_path, name=f"{tag}.yaml", benchmark="toy", metric="pass@k", k=1,
                            model="openai/bench", api_base=api_base, options={"n": N}, concurrency=N,
                            retry={"max_retries": 0, "base_delay_s": 0.0}, tag=tag, **keys)
    return engine.run(runspec.load(variant), db)


def stored(db) -> list[tuple]:
    return rows(db, "SELECT api_base, model, sustained, bounded, ceiling, run_id IS NOT NULL "
                    "FROM endpoint_limits ORDER BY recorded_at")


def test_a_second_run_starts_at_the_limit_the_first_sustained(tmp_path, db):
    with CountingServer(delay_s=0.02) as server:
        first = run(tmp_path, db, server.api_base, "first")
        [state] = first.model_limits
        assert first.attempts_written == N and state.start == DEFAULT_START
        # Slow start: no more than 4 calls went out before the first reply.
        assert server.in_flight_at_first_reply is not None and server.in_flight_at_first_reply <= DEFAULT_START
        [(api_base, model, sustained, bounded, ceiling, has_run)] = stored(db)
        assert (api_base, model, bounded, ceiling, has_run) == (server.api_base, "openai/bench", False, N, True)
        assert DEFAULT_START < sustained <= state.peak_in_flight

        # The second run must have `sustained` calls in flight before the server answers any.
        server.reset(hold_until=sustained)
        second = run(tmp_path, db, server.api_base, "second")
        [state] = second.model_limits
        assert second.attempts_written == N and state.start == min(N, limits.UNBOUNDED_GAIN * sustained)
        assert server.in_flight_at_first_reply >= sustained
        assert state.peak_in_flight >= sustained and state.rate_limited == 0


def test_a_remembered_limit_too_high_still_backs_off_and_is_bounded(tmp_path, db):
    """A stale memory (40 in flight) against a server that refuses past 6: the run completes
    valid, the limit falls at the first 429 and what is stored is bounded; the next run starts
    there and probes past it only additively."""
    with CountingServer(delay_s=0.02, max_in_flight=6) as server:
        with store.connect(db) as con:
            queries.append_endpoint_limit(con, api_base=server.api_base, model="openai/bench", sustained=40,
                                          bounded=False, ceiling=N, rate_limited=0, calls=40, run_id=None)
        server.reset()
        first = run(tmp_path, db, server.api_base, "first")
        [state] = first.model_limits
        assert state.start == min(N, limits.UNBOUNDED_GAIN * 40)
        assert state.rate_limited == server.rate_limited > 0
        assert state.lowest <= 6
        assert rows(db, "SELECT count(*) FILTER (WHERE status = 'ok'), count(*) FROM attempts "
                        "WHERE run_id LIKE '%@first'") == [(N, N)]
        [*_, (_, _, sustained, bounded, _, _)] = stored(db)
        assert bounded and 1 <= sustained < 40

        server.reset()
        second = run(tmp_path, db, server.api_base, "second")
        [state] = second.model_limits
        assert state.start == max(sustained, DEFAULT_START) and second.attempts_errored == 0


def test_the_api_base_is_stored_and_shown_without_its_user_password_or_query(tmp_path, db):
    with CountingServer(delay_s=0.01) as server:
        secret_base = server.api_base.replace("http://", "http://alice:s3cret@")
        result = run(tmp_path, db, secret_base, "secret")
        assert any(a.startswith("Basic ") for a in server.authorization)  # the URL's user did reach it
    [state] = result.model_limits
    assert state.api_base == server.api_base
    [(api_base, *_)] = stored(db)
    assert api_base == server.api_base
    with duckdb.connect(str(db), read_only=True) as con:
        columns = con.execute("SELECT table_name, column_name FROM duckdb_columns() WHERE NOT internal "
                              "AND data_type IN ('VARCHAR', 'JSON')").fetchall()
        for table, column in columns:
            hits = con.execute(f'SELECT count(*) FROM "{table}" WHERE "{column}"::VARCHAR LIKE ?',
                               ["%s3cret%"]).fetchone()[0]
            assert hits == 0, f"{table}.{column} holds the api_base's password"


@pytest.mark.parametrize("url, public", [
    ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
    ("HTTPS://User:Pass@API.Example.com/v1/?api-key=xyz#frag", "https://api.example.com/v1"),
    ("https://token@example.com:8443/openai/v1/", "https://example.com:8443/openai/v1"),
    ("http://[::1]:9000/v1?key=1", "http://[::1]:9000/v1"),
    ("ftp://example.com/v1", None), ("localhost:8000", None), ("http://:80/v1", None),
])
def test_public_url_keeps_scheme_host_port_and_path_only(url, public):
    from seqk.models.endpoints import public_url

    assert public_url(url) == public


def test_which_models_are_remembered_and_under_what_key():
    assert limits.endpoint_key("openai/x", "http://u:p@h:1/v1?k=2") == ("http://h:1/v1", "openai/x")
    assert limits.endpoint_key("anthropic/claude-sonnet-4-6", None) == ("", "anthropic/claude-sonnet-4-6")
    assert limits.endpoint_key("mock/actor", None) is None
    assert limits.endpoint_key("local/smollm2-135m", None) is None
    assert limits.endpoint_key(None, None) is None
    assert limits.endpoint_key("openai/x", "not a url") is None


def remembered(sustained, bounded=False, age_hours=0.0) -> limits.RememberedLimit:
    return limits.RememberedLimit("http://h:1/v1", "openai/x", sustained, bounded, 64, 0, 10, "r", age_hours)


def test_a_remembered_start_halves_per_day_and_is_dropped_at_the_default():
    assert remembered(120, bounded=True).start == 120
    assert remembered(120, bounded=True, age_hours=24).start == 60
    assert remembered(120, bounded=True, age_hours=48).start == 30
    assert remembered(120, bounded=True, age_hours=24 * 5).start is None  # 3.75: no more than the default
    assert remembered(None).start is None  # forgotten


def test_an_unbounded_value_is_a_lower_bound_and_starts_at_twice_it_as_it_ages():
    """No 429 bounded it: slow start from it would reach twice it in one round anyway."""
    assert remembered(60).start == 120
    assert remembered(60, age_hours=24).start == 60
    assert remembered(8, age_hours=48).start is None  # 2 x 2 = 4: no more than the default
    assert remembered(3).start == 6


def test_an_unbounded_memory_is_replaced_only_by_a_larger_value_than_it_held():
    known = {("http://h:1/v1", "openai/x"): remembered(60)}
    same = FakePool(("openai/x", "http://h:1/v1", 60, False, FakeLimit()))
    assert limits.to_record(same, known, "r2") == []  # no news: the row stands, ageing
    more = FakePool(("openai/x", "http://h:1/v1", 90, False, FakeLimit()))
    [row] = limits.to_record(more, known, "r2")  # below the doubled start, beyond what it held
    assert (row["sustained"], row["bounded"]) == (90, False)


class FakePool:
    def __init__(self, *found):
        self.found = found

    def sustained(self):
        return list(self.found)


class FakeLimit:
    ceiling, rate_limited, successes = 64, 2, 30


def test_what_an_invocation_records():
    known = {("http://h:1/v1", "openai/x"): remembered(20, bounded=True)}
    unbounded_10 = FakePool(("openai/x", "http://h:1/v1", 10, False, FakeLimit()))
    assert limits.to_record(unbounded_10, known, "r2") == []  # no 429 and under the bound: nothing new
    unbounded_30 = FakePool(("openai/x", "http://h:1/v1", 30, False, FakeLimit()))
    [row] = limits.to_record(unbounded_30, known, "r2")  # beyond the bound without a 429
    assert (row["sustained"], row["bounded"], row["api_base"]) == (30, False, "http://h:1/v1")
    bounded_8 = FakePool(("openai/x", "http://u:p@h:1/v1?k=1", 8, True, FakeLimit()))
    [row] = limits.to_record(bounded_8, known, "r2")  # a 429 bounded it: always news
    assert (row["sustained"], row["bounded"], row["api_base"], row["run_id"]) == (8, True, "http://h:1/v1", "r2")
    assert limits.to_record(FakePool(("mock/x", None, 8, True, FakeLimit())), {}, "r") == []


def test_starts_map_each_role_to_its_remembered_start_and_bound():
    from seqk.models.role import RoleSpec

    known = {("http://h:1/v1", "openai/x"): remembered(20, bounded=True),
             ("http://h:1/v1", "openai/y"): remembered(50)}
    roles = [RoleSpec("actor", "openai/x", api_base="http://u:p@h:1/v1/"),
             RoleSpec("judge", "openai/y", api_base="http://h:1/v1"), RoleSpec("critic", None)]
    assert limits.starts(roles, known) == {("openai/x", "http://u:p@h:1/v1/"): (20, 20),
                                           ("openai/y", "http://h:1/v1"): (100, None)}


def test_seqk_limits_lists_and_resets_them(tmp_path, db):
    with CountingServer(delay_s=0.01) as server:
        run(tmp_path, db, server.api_base, "first")
        cli = CliRunner()
        shown = cli.invoke(app, ["limits", "--db", str(db)])
        assert shown.exit_code == 0, shown.output
        assert "openai/bench" in shown.output and server.api_base in shown.output
        reset = cli.invoke(app, ["limits", "--reset", "--model", "openai/bench", "--db", str(db)])
        assert reset.exit_code == 0, reset.output
        assert "forgot 1 remembered limit" in reset.output
        assert stored(db)[-1][2:4] == (None, False)
        server.reset()
        again = run(tmp_path, db, server.api_base, "again")
        assert again.model_limits[0].start == DEFAULT_START


def test_a_lake_remembers_the_limit_for_every_machine_that_runs_against_the_endpoint(tmp_path, lake_url):
    """On a lake the table is appended like any other: a second run (any process on any machine
    with the lake) starts where the first left the endpoint."""
    with CountingServer(delay_s=0.02) as server:
        first = run(tmp_path, lake_url, server.api_base, "first")
        with store.connect(lake_url, read_only=True) as con:
            [row] = limits.remembered(con).values()
        assert (row.api_base, row.model, row.bounded) == (server.api_base, "openai/bench", False)
        assert DEFAULT_START < row.sustained <= first.model_limits[0].peak_in_flight
        server.reset(hold_until=row.sustained)
        second = run(tmp_path, lake_url, server.api_base, "second")
        assert second.model_limits[0].start == min(N, limits.UNBOUNDED_GAIN * row.sustained)
        assert server.in_flight_at_first_reply >= row.sustained
