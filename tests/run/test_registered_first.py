"""No model request before the run is registered in the database: a run whose registration
fails sends nothing (it has paid nothing, and a resume can never pay for the same attempt
twice) and ends with one `error:` line, exit 2.

The model is bench/openai_server.py on loopback (a real subprocess) that counts the chat
requests it receives; `seqk run` is a real process. A start-up that sent its first calls while
the database was still being made (issue 18's refused shortcut) fails these tests."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from helpers import rows, write_variant

from seqk import store

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The loopback server; yields its base address (stats at /stats, the API under /v1)."""
    import servers

    with servers.openai_server(reply="[[-1]]") as api:
        yield api.removesuffix("/v1")


def requests_seen(base: str, *, reset: bool = False) -> int:
    request = urllib.request.Request(base + ("/stats/reset" if reset else "/stats"),
                                     method="POST" if reset else "GET")
    with urllib.request.urlopen(request, timeout=10) as reply:
        return int(json.loads(reply.read())["requests"])


def seqk_run(folder: Path, variant: Path, db: Path, *, max_file_bytes: int | None = None
             ) -> subprocess.CompletedProcess[str]:
    def limit() -> None:  # in the child: every file it writes stops at this size (EFBIG), as on a full disk
        if max_file_bytes is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))

    env = os.environ | {"PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, "-m", "seqk", "run", str(variant), "--db", str(db), "--no-export"],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=120, preexec_fn=limit)


def arcagi2_variant(folder: Path, base: str, name: str = "v.yaml") -> Path:
    return write_variant(folder, name, benchmark="arcagi2", metric="pass@k", k=2, model="openai/bench",
                         api_base=base + "/v1", max_tasks=3, retry={"max_retries": 0},
                         options={"split": "evaluation"})


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    return lines[0]


@pytest.mark.slow
def test_a_new_database_that_cannot_be_written_sends_no_request(server: str, tmp_path: Path) -> None:
    variant, db = arcagi2_variant(tmp_path, server), tmp_path / "runs" / "seqk.duckdb"
    requests_seen(server, reset=True)
    done = seqk_run(tmp_path, variant, db, max_file_bytes=64 * 1024)  # a new database needs ~1 MB
    assert done.returncode == 2, done.stderr
    line = one_error_line(done)
    assert f"cannot create the database {db}" in line
    assert requests_seen(server) == 0
    # Nothing half-written: no database, and no file from the attempt to make one.
    assert not db.exists()
    assert [p.name for p in db.parent.iterdir() if p.name != ".seqk-locks"] == []
    # The same command where the database can be written does reach the server.
    done = seqk_run(tmp_path, variant, db)
    assert done.returncode == 0, done.stderr
    assert requests_seen(server) == 6
    assert rows(db, "SELECT count(*) FROM attempts WHERE status = 'ok'") == [(6,)]


def test_a_run_row_the_database_refuses_sends_no_request(server: str, tmp_path: Path) -> None:
    variant, db = arcagi2_variant(tmp_path, server), tmp_path / "seqk.duckdb"
    with store.connect(db):
        pass
    # A database whose runs table takes no run this seqk writes (its config column is a number).
    with duckdb.connect(str(db)) as con:
        con.execute("ALTER TABLE run_rows ALTER COLUMN config TYPE INTEGER")
    requests_seen(server, reset=True)
    done = seqk_run(tmp_path, variant, db)
    assert done.returncode == 2, done.stderr
    assert "cannot register the run" in one_error_line(done)
    assert requests_seen(server) == 0
    assert rows(db, "SELECT count(*) FROM run_rows") == [(0,)]
    assert rows(db, "SELECT count(*) FROM tasks") == [(0,)]
