"""A variant resolves into the run (RunSpec: identity, stored with it) and this invocation's
settings (RunSettings: database, console, export, S3): settings never change the run, and the
database is chosen in one place."""

from __future__ import annotations

import dataclasses

from helpers import write_variant

from seqk.config import runspec
from seqk.config.runspec import RunSettings, RunSpec

BASE = dict(benchmark="toy", metric="seq@k", k=2, model="mock/echo", options={"n": 2})


def test_invocation_settings_never_change_the_run(tmp_path):
    plain, defaults = runspec.load_with_settings(write_variant(tmp_path, "a.yaml", **BASE))
    other, settings = runspec.load_with_settings(write_variant(
        tmp_path, "a.yaml", **BASE, db=str(tmp_path / "x.duckdb"), console_char_limit=10,
        export_dir=str(tmp_path / "out"), s3_sync=False, s3_bucket="b"))
    assert defaults == RunSettings()
    assert settings == RunSettings(db=str(tmp_path / "x.duckdb"), console_char_limit=10,
                                   export_dir=str(tmp_path / "out"), s3_sync=False, s3_bucket="b")
    assert other.run_id == plain.run_id and other.fingerprint() == plain.fingerprint()
    assert other.config_json() == plain.config_json()
    kept = {f.name for f in dataclasses.fields(RunSpec)}
    assert not kept & {f.name for f in dataclasses.fields(RunSettings)}


def test_the_database_is_the_argument_then_the_variants(tmp_path):
    settings = RunSettings(db="from/variant.duckdb")
    assert settings.database(tmp_path / "given.duckdb") == tmp_path / "given.duckdb"
    assert settings.database(None) == "from/variant.duckdb"
    lake = "ducklake:postgres:dbname=seqk;data=s3://bucket/prefix/"
    assert RunSettings(db=lake).database(None) == lake  # kept whole: Path would fold the `//`
    assert RunSettings().database(None) is None  # seqk.store then picks $SEQK_DB, runs/seqk.duckdb
