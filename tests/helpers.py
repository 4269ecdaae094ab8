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


class UnusedRole:
    """A RoleClient a test expects never to be called (a deterministic verifier's judge)."""

    model = None

    def __init__(self, role: str) -> None:
        self.role = role

    async def complete(self, prompt: str) -> str:
        raise AssertionError(f"the {self.role} was called: {prompt[:80]!r}")


def context(bench, options=None, *, judge=None, critic=None, mode: str | None = None, **more):
    """An AttemptContext as the engine builds one for `bench`: its default options and feedback
    mode unless given, and judge and critic that must not be called unless given."""
    from seqk.benchmark import AttemptContext

    return AttemptContext(options=bench.Options() if options is None else options,
                          judge=judge or UnusedRole("judge"), critic=critic or UnusedRole("critic"),
                          mode=bench.feedback_mode(mode or bench.default_feedback_mode), **more)
