"""A plain, non-editable install finds sql/ and benchmarks/ as package data, not via the checkout."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent


def test_wheel_ships_sql_and_benchmarks_and_works_outside_the_checkout(tmp_path):
    # From a copy without build/: setuptools would otherwise reuse files a former build left there
    # (a renamed or removed .sql file among them).
    source = tmp_path / "src"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        "build", "dist", ".git", "runs", "*.duckdb*", "__pycache__", "*.egg-info", ".venv", ".seqk-locks"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps",
                    "-q", "-w", str(tmp_path / "dist")],
                   check=True, capture_output=True)
    wheel = next((tmp_path / "dist").glob("seqk-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "seqk/sql/schema.sql" in names and "seqk/sql/attempts.sql" in names
    assert "benchmarks/arcagi2/__init__.py" in names
    target = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(target)
    code = ("import seqk, benchmarks; from seqk.store import sqlfiles; from seqk import benchmark; "
            "assert 'pending_attempts' in sqlfiles.queries(); assert sqlfiles.schema(); "
            "assert 'arcagi2' in benchmark.names(); "
            f"assert seqk.__file__.startswith({str(target)!r}), seqk.__file__; "
            f"assert benchmarks.__file__.startswith({str(target)!r}); print('ok')")
    out = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(target)!r}); {code}"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr
