"""A sweep's cells N at once (`seqk run sweep.yaml --parallel N`): each cell is `seqk run <base>
--set ...` in a process of its own, so each is an ordinary run (its lease, its budget, its
resume) and the cells share the database as any runs do (docs/concurrency.md). One after another
(N = 1), the cells run in this process instead (seqk.api.run_sweep).

The first SIGINT or SIGTERM stops launching cells and is passed on to the cells running (which
keep what finished, as a run does); later signals are ignored until they have all returned. A
rerun of the sweep goes on where each cell stopped.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from seqk.config.sweep import Cell, Sweep, shown
from seqk.run import signals

POLL_S = 0.05


@dataclass
class CellProcess:
    """One cell's process, once it has ended."""

    cell: Cell
    returncode: int
    """`seqk run`'s exit status: 0, 1 (errors), 2 (refused), 3 (budget), 130 (interrupted)."""
    stdout: str
    stderr: str


def cell_argv(base: Path, cell: Cell, db: str, *, export: bool, upload: bool) -> list[str]:
    """The `seqk run` command of one cell, as this interpreter runs it."""
    sets = [arg for key, value in cell.overrides.items() for arg in ("--set", f"{key}={shown(value)}")]
    return [sys.executable, "-m", "seqk", "run", str(base), *sets, "--db", db,
            *([] if export else ["--no-export"]), *([] if upload else ["--no-upload"])]


@dataclass
class _Running:
    cell: Cell
    process: subprocess.Popen[bytes]
    out: IO[bytes]
    err: IO[bytes]

    def ended(self) -> CellProcess:
        texts = []
        for handle in (self.out, self.err):
            handle.seek(0)
            texts.append(handle.read().decode("utf-8", "replace"))
        return CellProcess(self.cell, self.process.returncode, texts[0], texts[1])


def run_in_processes(sweep: Sweep, db: str, parallel: int, *, export: bool = True, upload: bool = True,
                     on_start: Callable[[Cell], None] | None = None,
                     on_end: Callable[[CellProcess], None] | None = None) -> tuple[list[CellProcess], bool]:
    """Run the cells `parallel` at once; each one's outcome (in the order they ended) and whether
    a signal stopped the sweep (the cells not started then are not in the list)."""
    waiting = list(sweep.cells)
    running: list[_Running] = []
    done: list[CellProcess] = []
    stopped: list[int] = []

    def on_signal(signum: int) -> None:
        if stopped:
            return
        stopped.append(signum)
        for cell in running:
            if cell.process.poll() is None:
                cell.process.send_signal(signal.SIGINT if signum == signal.SIGINT else signal.SIGTERM)

    with signals.relayed(on_signal), contextlib.ExitStack() as files:
        while running or (waiting and not stopped):
            while waiting and len(running) < parallel and not stopped:
                cell = waiting.pop(0)
                out = files.enter_context(tempfile.TemporaryFile())
                err = files.enter_context(tempfile.TemporaryFile())
                argv = cell_argv(sweep.base, cell, db, export=export, upload=upload)
                running.append(_Running(cell, subprocess.Popen(argv, stdout=out, stderr=err), out, err))
                if on_start is not None:
                    on_start(cell)
            for entry in [r for r in running if r.process.poll() is not None]:
                running.remove(entry)
                done.append(entry.ended())
                if on_end is not None:
                    on_end(done[-1])
            if running:
                time.sleep(POLL_S)
    return done, bool(stopped)
