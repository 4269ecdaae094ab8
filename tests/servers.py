"""Throwaway servers the lake tests (and bench/bench_lake.py) start on loopback: PostgreSQL 15
from Debian's package (its own data dir, port and socket dir; run as the `postgres` user when
we are root, as initdb refuses root) and moto's S3. Both are stopped by whoever started them."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PG_BIN_DIRS = [Path("/usr/lib/postgresql") / v / "bin" for v in ("17", "16", "15")]


def pg_bin() -> Path | None:
    """The folder of initdb/pg_ctl, or None when PostgreSQL is not installed."""
    for folder in PG_BIN_DIRS:
        if (folder / "initdb").exists():
            return folder
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Postgres:
    port: int
    user: str
    database: str

    def dsn(self) -> str:
        return f"dbname={self.database} host=127.0.0.1 port={self.port} user={self.user}"


def _as_postgres(args: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return args
    return ["runuser", "-u", "postgres", "--", *args]


@contextlib.contextmanager
def postgres(database: str = "seqk") -> Iterator[Postgres]:
    """A PostgreSQL server on 127.0.0.1 (trust auth), stopped and removed on exit."""
    bindir = pg_bin()
    if bindir is None:
        raise RuntimeError("PostgreSQL is not installed (apt-get install postgresql)")
    root = Path(tempfile.mkdtemp(prefix="seqk-pg-"))
    data, sockets = root / "data", root / "sock"
    sockets.mkdir()
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
        shutil.chown(sockets, "postgres")
    user = "postgres" if os.geteuid() == 0 else os.environ.get("USER", "postgres")
    port = free_port()
    run = {"check": True, "stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE, "timeout": 120}
    subprocess.run(_as_postgres([str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", user,
                                 "--no-sync"]), **run)
    opts = f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60"
    subprocess.run(_as_postgres([str(bindir / "pg_ctl"), "-D", str(data), "-o", opts, "-w", "-t", "60",
                                 "-l", str(root / "log"), "start"]), **run)
    try:
        subprocess.run(_as_postgres([str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(port),
                                     "-U", user, database]), **run)
        yield Postgres(port, user, database)
    finally:
        subprocess.run(_as_postgres([str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w",
                                     "-t", "60", "stop"]), check=False, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=120)
        shutil.rmtree(root, ignore_errors=True)


def create_database(pg: Postgres, name: str) -> str:
    """A fresh database on the server; its DSN."""
    bindir = pg_bin()
    assert bindir is not None
    subprocess.run(_as_postgres([str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(pg.port),
                                 "-U", pg.user, name]), check=True, timeout=60,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return f"dbname={name} host=127.0.0.1 port={pg.port} user={pg.user}"


@contextlib.contextmanager
def moto_s3() -> Iterator[str]:
    """moto's S3 on loopback; yields its endpoint URL (http://127.0.0.1:PORT)."""
    import logging

    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # a line per S3 request otherwise
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()
