"""Helpers of the viewer's browser tests: Chromium's flags, `seqk view` started on a loopback port
of its choosing, the engine run beside Playwright's event loop (the fixtures are in conftest.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from procs import stop

CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
SERVER_START_S = 30


def in_thread(function: Callable[..., Any], *args: Any) -> Any:
    """Run the engine beside Playwright, whose sync API holds an event loop in this thread."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(function, *args).result()


@contextmanager
def seqk_view(db: Path) -> Iterator[str]:
    """`seqk view` over `db` on a loopback port of its choosing: its URL, until the block ends."""
    proc = subprocess.Popen([sys.executable, "-m", "seqk", "view", "--db", str(db), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=os.environ | {"PYTHONUNBUFFERED": "1"})
    try:
        deadline = time.monotonic() + SERVER_START_S
        line = ""
        while time.monotonic() < deadline and "serving" not in line:
            line = proc.stdout.readline()
            assert line or proc.poll() is None, "seqk view exited before serving"
        url = re.search(r"at (http://127\.0\.0\.1:\d+/) ", line)
        assert url, f"seqk view did not say where it serves: {line!r}"
        yield url.group(1)
    finally:
        stop(proc)
