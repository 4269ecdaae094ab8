"""Helpers the tests share: variants written to a temporary folder, rows read back as a user would.

Imported as `from helpers import ...` (tests/conftest.py puts this folder on sys.path); fixtures
stay in conftest.py."""

from __future__ import annotations

from pathlib import Path


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
