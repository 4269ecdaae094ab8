"""Shared fixtures: a toy benchmark registered in-process, scripted mock models,
and a fresh database path per test."""

from __future__ import annotations

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


def write_variant(folder: Path, name: str = "v.yaml", **keys) -> Path:
    """Write a variant YAML under folder/variants/<benchmark>/."""
    import yaml

    bench = keys.get("benchmark", "toy")
    path = folder / "variants" / bench / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(keys, sort_keys=False))
    return path


def rows(db: Path, sql: str, params: list | dict | None = None) -> list[tuple]:
    """A read-only query's rows, opening and closing the database as a user's reader would."""
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql, params).fetchall() if params is not None else con.execute(sql).fetchall()
