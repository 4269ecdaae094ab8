"""The one place that handles SIGINT and SIGTERM (Ctrl-C, `kill`, a batch scheduler's stop).

During a run (`run_until_signalled`, used by every run: the scheduler's, batch rounds', rejudge's):
the first signal cancels the run, which then writes the attempts that finished; the observer hears
it at once. Later signals are ignored until the run returns, so an impatient user cannot cancel
the final write; nor can a first signal that lands on it (`uninterrupted`). The handlers in
place before the run are back when it returns, so a notebook's Ctrl-C works as before.

Around processes a sweep started (`relayed`): signals are passed on to them, not obeyed.

Around a command (`outlast`, used by the CLI): before a run is stopped, signals do what Python
does by default; once one is, more signals cannot kill the process before it has said what it
kept, and it exits with 130.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Awaitable, Callable, Iterator
from types import FrameType
from typing import Any, TypeVar

T = TypeVar("T")

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

# Not every platform or thread can take signal handlers; then Ctrl-C is Python's own.
_NO_HANDLERS = (NotImplementedError, RuntimeError, ValueError)


def run_until_signalled(job: Callable[[], Awaitable[T]], on_first: Callable[[], None]) -> T:
    """asyncio.run(job()), cancelled by the first SIGINT or SIGTERM (then `on_first()` is called);
    later signals are ignored until it returns; the previous handlers are restored after."""

    async def main() -> T:
        runner: asyncio.Task[T] = asyncio.ensure_future(job())
        loop = asyncio.get_running_loop()

        def stop() -> None:
            # The first signal cancels the run; later ones must not cancel the final write.
            if not runner.cancelling():
                runner.cancel()
                on_first()

        previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
        for sig in previous:
            with contextlib.suppress(*_NO_HANDLERS):
                loop.add_signal_handler(sig, stop)
        try:
            return await runner
        finally:
            for sig, handler in previous.items():
                with contextlib.suppress(*_NO_HANDLERS):
                    loop.remove_signal_handler(sig)
                    # remove_signal_handler installs Python's default, not what was there.
                    signal.signal(sig, handler if handler is not None else signal.SIG_DFL)

    return asyncio.run(main())


async def uninterrupted(job: Awaitable[None]) -> bool:
    """Await `job` to its end even when this task is cancelled meanwhile (a first signal that
    lands on a run's final write); True when it was. The job's own errors are raised."""
    task = asyncio.ensure_future(job)
    cancelled = False
    while True:
        try:
            await asyncio.shield(task)
            return cancelled
        except asyncio.CancelledError:
            if task.done():  # the job itself was cancelled, not this task
                raise
            cancelled = True


@contextlib.contextmanager
def relayed(on_signal: Callable[[int], None]) -> Iterator[None]:
    """For a process that waits on processes it started (a sweep's cells): inside the block,
    SIGINT and SIGTERM call `on_signal(signum)` (which passes them on) instead of ending this
    process; the previous handlers are back after."""
    previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    for sig in STOP_SIGNALS:
        with contextlib.suppress(*_NO_HANDLERS):
            signal.signal(sig, lambda signum, frame: on_signal(signum))
    try:
        yield
    finally:
        for sig, before in previous.items():
            with contextlib.suppress(*_NO_HANDLERS):
                signal.signal(sig, before if before is not None else signal.SIG_DFL)


@contextlib.contextmanager
def outlast(stopped: Callable[[], bool]) -> Iterator[None]:
    """For a command that runs: while `stopped()` is False, SIGINT raises KeyboardInterrupt and
    SIGTERM ends the process, as by default; once it is True (the run heard its first signal),
    more signals are ignored, and stay ignored after the block, for the exit that follows."""

    def handler(signum: int, frame: FrameType | None) -> Any:
        if stopped():
            return
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    for sig in STOP_SIGNALS:
        signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, before in previous.items():
            # Ignored, not handled, once stopped: Python resets handled signals to their default
            # while it shuts down, and one more Ctrl-C then would kill the process instead of
            # letting it exit with 130.
            signal.signal(sig, signal.SIG_IGN if stopped() else
                          before if before is not None else signal.SIG_DFL)
