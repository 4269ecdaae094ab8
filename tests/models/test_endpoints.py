"""A role's server that is not there costs seconds, not minutes: `seqk run` and `seqk plan`
check every endpoint before writing anything, and a server that dies mid-run trips a
breaker. Real processes and real loopback sockets: bench/openai_server.py as the server."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import duckdb
import pytest
import yaml
from procs import env

from seqk.models.endpoints import BREAKER_WINDOW_S

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(port: int, delay_s: float = 0.05) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, str(ROOT / "bench" / "openai_server.py"),
                             "--port", str(port), "--delay", str(delay_s)])
    for _ in range(200):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/stats", timeout=1).read()
            return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise AssertionError("the loopback server did not start")


def requests_served(port: int) -> int:
    return json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/stats", timeout=5).read())["requests"]


def variant(tmp_path: Path, port: int, **keys) -> Path:
    path = tmp_path / "variants" / "arcagi2" / "v.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    base = dict(metric="pass@k", k=2, feedback_mode="binary", model="openai/bench",
                api_base=f"http://127.0.0.1:{port}/v1", max_tasks=4, concurrency=2,
                options={"split": "evaluation"})
    path.write_text(yaml.safe_dump(base | keys))
    return path


def seqk(*args: str, timeout: float = 300) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "seqk", *args], env=env(), capture_output=True,
                          text=True, timeout=timeout)
    return done, time.monotonic() - start


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def test_a_port_where_nothing_listens_stops_run_and_plan_before_anything_is_written(tmp_path):
    port = free_port()
    db = tmp_path / "seqk.duckdb"
    path = variant(tmp_path, port)
    url = f"http://127.0.0.1:{port}/v1"
    for command in ("run", "plan"):
        done, elapsed = seqk(command, str(path), "--db", str(db))
        assert done.returncode == 1, done.stderr
        lines = error_lines(done.stderr)
        assert lines == [f"error: the actor (openai/bench) cannot reach {url}: connection refused "
                         f"(nothing listens on port {port}); is the server running, and is the port "
                         "right?"], done.stderr
        assert "Traceback" not in done.stderr
        print(f"seqk {command} against a closed port: exit 1 after {elapsed:.1f} s")
        assert elapsed < 60  # it took about 5 minutes of retries before
    assert not db.exists() and not (tmp_path / ".seqk-locks").exists()


def test_roles_sharing_a_server_are_checked_once_and_named_together():
    from seqk.errors import EndpointUnreachable
    from seqk.models import check_endpoints
    from seqk.models.role import RoleSpec

    shared, other = free_port(), free_port()
    listening = socket.create_server(("127.0.0.1", 0))
    try:
        up = f"http://127.0.0.1:{listening.getsockname()[1]}/v1"
        roles = [RoleSpec("actor", "openai/a", api_base=f"http://127.0.0.1:{shared}/v1"),
                 RoleSpec("judge", "openai/b", api_base=f"http://127.0.0.1:{shared}/v1/"),
                 RoleSpec("critic", "openai/c", api_base=f"http://localhost:{other}/v1")]
        with pytest.raises(EndpointUnreachable) as caught:
            check_endpoints([*roles, RoleSpec("actor", "openai/up", api_base=up),
                             RoleSpec("judge", "mock/echo"), RoleSpec("critic", None)])
        check_endpoints([RoleSpec("actor", "openai/up", api_base=up)])
    finally:
        listening.close()
    refused = "connection refused (nothing listens on port {}); is the server running, and is the port right?"
    assert str(caught.value) == (
        f"the actor (openai/a) and the judge (openai/b) cannot reach http://127.0.0.1:{shared}/v1: "
        + refused.format(shared) + f"; the critic (openai/c) cannot reach http://localhost:{other}/v1: "
        + refused.format(other))
    assert caught.value.exit_code == 1 and "\n" not in str(caught.value)


class RunAgainstServer:
    """A `seqk run` of max_tasks (concurrency 4) against a loopback server answering after delay_s;
    on leaving, whatever of the two still runs is killed."""

    def __init__(self, tmp_path: Path, max_tasks: int, delay_s: float) -> None:
        self.port, self.delay_s, self.db = free_port(), delay_s, tmp_path / "seqk.duckdb"
        self.server = start_server(self.port, delay_s=delay_s)
        path = variant(tmp_path, self.port, max_tasks=max_tasks, concurrency=4)
        self.run = subprocess.Popen([sys.executable, "-m", "seqk", "run", str(path), "--db", str(self.db),
                                     "--no-export"], env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True)

    def kill_server_after(self, served: int) -> float:
        """SIGKILL the server (mid-request: calls in flight lose their connection) once it has
        served `served` requests; the time it died."""
        deadline = time.monotonic() + 120
        while requests_served(self.port) < served:
            assert self.run.poll() is None and time.monotonic() < deadline, "the run ended too soon"
            time.sleep(0.05)
        self.server.send_signal(signal.SIGKILL)
        self.server.wait(timeout=10)
        return time.monotonic()

    def __enter__(self) -> RunAgainstServer:
        return self

    def __exit__(self, *exc: object) -> None:
        for proc in (self.run, self.server):
            if proc.poll() is None:
                proc.kill()
                proc.wait()


@pytest.mark.slow
def test_a_server_that_dies_mid_run_trips_the_breaker(tmp_path):
    with RunAgainstServer(tmp_path, max_tasks=60, delay_s=0.2) as both:
        died = both.kill_server_after(20)
        out, err = both.run.communicate(timeout=BREAKER_WINDOW_S + 120)
        stopped_after = time.monotonic() - died
    run, port = both.run, both.port
    print(f"server killed: the run exited {stopped_after:.1f} s later")
    assert run.returncode == 1, err
    assert error_lines(err) == [
        f"error: the run stopped: the actor (openai/bench) cannot reach http://127.0.0.1:{port}/v1: "
        f"connection refused (nothing listens on port {port}), and no call succeeded for "
        f"{BREAKER_WINDOW_S:g} s; is the server running, and is the port right?"], err
    assert stopped_after < BREAKER_WINDOW_S + 60  # max_retries of backoff take minutes
    with duckdb.connect(str(both.db), read_only=True) as con:
        valid, errors, tripped, tasks = con.execute(
            "SELECT count(*) FILTER (status = 'ok'), count(*) FILTER (status = 'error'), "
            "count(*) FILTER ((error->>'$.type') = 'EndpointUnreachable' AND (error->>'$.stage') = 'actor'), "
            "count(DISTINCT task_index) FROM attempts").fetchone()
    # Attempts in flight when it tripped are errors of the actor stage; later tasks never started.
    assert valid >= 10 and tripped >= 1 and errors >= tripped
    assert tasks < 60


@pytest.mark.slow
def test_a_server_that_refuses_briefly_then_recovers_is_retried_to_the_end(tmp_path):
    with RunAgainstServer(tmp_path, max_tasks=30, delay_s=0.1) as both:
        down = both.kill_server_after(10)
        time.sleep(1.0)
        both.server = start_server(both.port, delay_s=0.1)
        downtime = time.monotonic() - down
        out, err = both.run.communicate(timeout=300)
    print(f"server down for {downtime:.1f} s; the run went on")
    assert downtime < BREAKER_WINDOW_S
    assert both.run.returncode == 0, err
    with duckdb.connect(str(both.db), read_only=True) as con:
        valid, errors, retried = con.execute(
            "SELECT count(*) FILTER (status = 'ok'), count(*) FILTER (status = 'error'), "
            "(SELECT count(*) FROM calls WHERE retries > 0) FROM attempts").fetchone()
    assert (valid, errors) == (60, 0)
    assert retried >= 1  # the outage was felt, and retried through


@pytest.mark.parametrize("api_base", ["localhost:8000/v1", "ftp://127.0.0.1/v1"])
def test_an_api_base_that_is_not_an_http_url_is_a_config_error(tmp_path, api_base):
    path = variant(tmp_path, 1, api_base=api_base)
    done, _ = seqk("plan", str(path))
    assert done.returncode == 2 and "api_base" in done.stderr and "C03" in done.stderr, done.stderr


def test_the_breaker_trips_only_when_no_call_gets_through_for_its_window():
    import asyncio

    from seqk.errors import EndpointUnreachable, TransientProviderError
    from seqk.models.endpoints import Breaker
    from seqk.models.role import RoleSpec

    role = RoleSpec("actor", "openai/bench", api_base=f"http://127.0.0.1:{free_port()}/v1")
    refused = TransientProviderError("Cannot connect", kind="ClientConnectorError", unreachable=True)
    slow = TransientProviderError("timed out", kind="TimeoutError")

    async def calls(breaker: Breaker, outcomes: list[str]) -> str | None:
        for outcome in outcomes:
            try:
                breaker.check(role)
            except EndpointUnreachable as exc:
                return str(exc)
            if outcome == "ok":
                breaker.on_success()
            else:
                breaker.on_failure(refused if outcome == "refused" else slow)
            await asyncio.sleep(0.05)
        await breaker.close()
        return None

    # A call every 0.05 s: a success every 0.15 s is far inside the window even when a loaded
    # machine stalls this loop for half a second.
    window = 1.0

    async def sleeper_wakes() -> float:
        breaker = Breaker(role.api_base, window)
        breaker.check(role)
        breaker.on_failure(refused)
        start = time.monotonic()
        await breaker.sleeper(asyncio.sleep)(60)  # a backoff far longer than the window
        return time.monotonic() - start

    async def all_four() -> list:
        # four breakers of their own, side by side in one loop: the four windows pass together
        return await asyncio.gather(
            # Flaky: refusals with a success now and then, for over two windows: never tripped.
            calls(Breaker(role.api_base, window), ["refused", "refused", "ok"] * 16),
            # A server that answers slowly is not a server that is gone.
            calls(Breaker(role.api_base, window), ["timeout"] * 48),
            # Nothing but refusals: tripped after the window, naming role, model and URL.
            calls(Breaker(role.api_base, window), ["refused"] * 200),
            sleeper_wakes())

    flaky, slow_server, tripped, slept = asyncio.run(all_four())
    assert flaky is None
    assert slow_server is None
    assert tripped is not None and tripped.startswith(f"the actor (openai/bench) cannot reach {role.api_base}")
    assert slept < 10


def test_rejudge_checks_the_new_judges_server_before_writing(tmp_path, db):
    from helpers import rows, write_variant
    from typer.testing import CliRunner

    from seqk import models
    from seqk.cli import app

    runner = CliRunner()
    models.register_mock("mock/judge", lambda prompt: "YES")
    variant = write_variant(tmp_path, benchmark="toyjudge", metric="pass@k", k=1,
                            model="mock/py:scripts:odd_tasks_right", judge_model="mock/judge",
                            options={"n": 2})
    assert runner.invoke(app, ["run", str(variant), "--db", str(db), "--no-export"]).exit_code == 0
    runs_before = rows(db, "SELECT count(*) FROM runs")
    port = free_port()
    source = rows(db, "SELECT run_id FROM runs")[0][0]
    result = runner.invoke(app, ["rejudge", source, "--judge-model", "openai/judge",
                                 "--judge-api-base", f"http://127.0.0.1:{port}/v1", "--db", str(db)])
    assert result.exit_code == 1, result.output
    assert f"the judge (openai/judge) cannot reach http://127.0.0.1:{port}/v1" in result.output
    assert rows(db, "SELECT count(*) FROM runs") == runs_before
