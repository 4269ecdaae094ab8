"""SIGINT and SIGTERM are handled in one place (seqk.run.signals): the first signal stops a run
(the scheduler's, batch rounds', rejudge's) and tells the observer once; later signals cannot
cancel the final write; the handlers from before are back when the run returns. Around a
command, once stopped, more signals are ignored until the process exits.

These tests send real signals to this very process, with handlers of their own in place so a
stray signal cannot end the test session."""

from __future__ import annotations

import ast
import os
import signal
from pathlib import Path

import pytest
from helpers import rows, write_variant
from scripts import solves_on

from seqk import models
from seqk.config import spec as runspec
from seqk.models.role import RoleSpec
from seqk.run import rejudge as rejudging
from seqk.run import scheduler, signals
from seqk.run.observer import AttemptEvent, RunObserver, RunResult

SEQK = Path(__file__).resolve().parents[2] / "seqk"


@pytest.fixture
def own_handlers():
    """Handlers of the test's own, counting what reaches them, restored after."""
    reached: list[int] = []

    def count(signum, frame):
        reached.append(signum)

    before = {sig: signal.getsignal(sig) for sig in signals.STOP_SIGNALS}
    for sig in signals.STOP_SIGNALS:
        signal.signal(sig, count)
    yield count, reached
    for sig, handler in before.items():
        signal.signal(sig, handler)


class Impatient(RunObserver):
    """Sends `signals` to this process after the `after`-th attempt; counts interruptions."""

    def __init__(self, after: int, sent: tuple[int, ...]):
        self.after, self.sent = after, sent
        self.attempts = 0
        self.events: list[str] = []

    def attempt(self, event: AttemptEvent) -> None:
        self.attempts += 1
        if self.attempts == self.after:
            for sig in self.sent:
                os.kill(os.getpid(), sig)

    def interrupted(self) -> None:
        self.events.append("interrupted")

    def finished(self, result: RunResult) -> None:
        self.events.append("finished")


def test_the_first_signal_stops_the_run_once_and_the_old_handlers_come_back(tmp_path, db, own_handlers):
    count, reached = own_handlers
    models.register_mock("mock/actor", solves_on({}), latency_s=0.02)
    spec = runspec.load(write_variant(tmp_path, benchmark="toy", metric="pass@k", k=2, concurrency=1,
                                      model="mock/actor", options={"n": 30}))
    impatient = Impatient(after=3, sent=(signal.SIGTERM, signal.SIGINT, signal.SIGTERM))
    result = scheduler.run(spec, db, impatient)
    assert result.interrupted and impatient.events == ["interrupted", "finished"]
    # Stopped early, yet what finished is written, whole: no attempt without its calls.
    assert 3 <= result.attempts_written == rows(db, "SELECT count(*) FROM attempts")[0][0] < 60
    assert rows(db, "SELECT count(*) FROM calls WHERE attempt_uid NOT IN "
                    "(SELECT attempt_uid FROM attempts)") == [(0,)]
    # The later signals went nowhere else: not to the handlers from before the run.
    assert reached == []
    assert all(signal.getsignal(sig) is count for sig in signals.STOP_SIGNALS)
    # The same run resumes to the end.
    assert scheduler.run(spec, db).attempts_written == 60 - result.attempts_written


def test_a_first_signal_during_the_final_write_cannot_cut_it_short(tmp_path, db, own_handlers, monkeypatch):
    """The run's work is done and its last batch is being written when Ctrl-C comes."""
    import time

    from seqk.store.file import DuckDBFile

    finish = DuckDBFile.finish

    def signalled_while_writing(self, con, run_id):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.3)  # the signal is handled by now, while this write is still going on
        finish(self, con, run_id)

    monkeypatch.setattr(DuckDBFile, "finish", signalled_while_writing)
    models.register_mock("mock/actor", solves_on({}))
    spec = runspec.load(write_variant(tmp_path, benchmark="toy", metric="pass@k", k=1, concurrency=1,
                                      model="mock/actor", options={"n": 3}))
    seen = Impatient(after=0, sent=())
    result = scheduler.run(spec, db, seen)
    assert result.interrupted and seen.events == ["interrupted", "finished"]
    assert result.attempts_written == 3 == rows(db, "SELECT count(*) FROM attempts")[0][0]
    assert rows(db, "SELECT count(*) FROM calls WHERE attempt_uid NOT IN "
                    "(SELECT attempt_uid FROM attempts)") == [(0,)]


def test_uninterrupted_finishes_its_job_through_a_cancellation():
    import asyncio

    done: list[str] = []

    async def final_write() -> None:
        await asyncio.sleep(0.2)
        done.append("written")

    async def closing() -> bool:
        return await signals.uninterrupted(final_write())

    async def main() -> bool:
        task = asyncio.create_task(closing())
        await asyncio.sleep(0.05)
        task.cancel()
        return await task

    assert asyncio.run(main()) is True and done == ["written"]


def test_rejudge_stops_on_a_signal_like_any_run(tmp_path, db, own_handlers):
    models.register_mock("mock/actor", solves_on({1: 1}))
    models.register_mock("mock/judge1", lambda p: "NO")
    source = runspec.load(write_variant(tmp_path, benchmark="toyjudge", metric="pass@k", k=2,
                                        model="mock/actor", judge_model="mock/judge1", options={"n": 20}))
    scheduler.run(source, db)
    models.register_mock("mock/judge2", lambda p: "YES", latency_s=0.02)
    spec = rejudging.rejudge_spec(source.run_id, RoleSpec(role="judge", model="mock/judge2"),
                                  concurrency=1, db=db)
    impatient = Impatient(after=2, sent=(signal.SIGINT, signal.SIGINT))
    result = rejudging.rejudge(spec, db, impatient)
    assert result.interrupted and impatient.events == ["interrupted", "finished"]
    assert 2 <= result.attempts_written < 40
    assert rejudging.rejudge(spec, db).attempts_written == 40 - result.attempts_written


def test_around_a_command_signals_act_as_usual_until_the_run_stops_then_are_ignored(own_handlers):
    stopped = [False]
    with signals.outlast(lambda: stopped[0]):
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
        stopped[0] = True
        os.kill(os.getpid(), signal.SIGINT)  # ignored: the run is writing what it kept
        os.kill(os.getpid(), signal.SIGTERM)
    # Ignored until the process exits, so Python's shutdown cannot turn one more into a kill.
    assert all(signal.getsignal(sig) is signal.SIG_IGN for sig in signals.STOP_SIGNALS)


def test_around_a_command_that_was_not_stopped_the_old_handlers_come_back(own_handlers):
    count, reached = own_handlers
    with signals.outlast(lambda: False):
        pass
    assert all(signal.getsignal(sig) is count for sig in signals.STOP_SIGNALS)


def test_only_the_signals_module_installs_signal_handlers():
    installers = {"signal", "add_signal_handler", "remove_signal_handler", "set_wakeup_fd"}
    found = []
    for path in sorted(SEQK.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in installers):
                found.append(str(path.relative_to(SEQK)))
    assert set(found) == {"run/signals.py"}
