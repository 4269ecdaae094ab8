"""How a lake is reached: S3 through the AWS credential chain (a profile in an AWS config file,
as `seqk upload` reads it too), and every statement of sql/lake/ and sql/postgres/ through its
generated function."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import boto3
import pytest
from helpers import write_variant
from scripts import solves_on
from servers import AWS_SETTINGS, new_lake
from typer.testing import CliRunner

from seqk import models, store
from seqk.cli import app
from seqk.config import spec as runspec
from seqk.errors import BadInput
from seqk.run import scheduler
from seqk.store import catalog, catalog_queries, lake, lake_queries, sqlfiles

runner = CliRunner()


@pytest.fixture
def no_aws(monkeypatch):
    """An environment that says nothing of AWS (and never asks the instance metadata service)."""
    for key in AWS_SETTINGS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    yield monkeypatch
    lake.close_all()


def test_a_profile_in_an_aws_config_file_serves_the_lake_and_the_upload(tmp_path, lake_servers, no_aws):
    _pg, endpoint = lake_servers
    config, credentials = tmp_path / "aws-config", tmp_path / "aws-credentials"
    config.write_text(f"[profile lab]\nregion = us-east-1\nendpoint_url = {endpoint}\n")
    credentials.write_text("[lab]\naws_access_key_id = lab-key\naws_secret_access_key = lab-secret\n")
    for key, value in {"AWS_CONFIG_FILE": config, "AWS_SHARED_CREDENTIALS_FILE": credentials,
                       "AWS_PROFILE": "lab"}.items():
        no_aws.setenv(key, str(value))
    url = new_lake(*lake_servers)
    models.register_mock("mock/actor", solves_on({1: 1}))
    spec = runspec.load(write_variant(tmp_path, benchmark="toy", metric="pass@k", k=2,
                                      model="mock/actor", options={"n": 3}))
    assert scheduler.run(spec, url).attempts_written == 6
    store.open(url).compact(keep_hours=0)  # rows inlined in the catalog go out to S3 as Parquet
    lake.close_all()  # a new session reads the data files back from S3
    with store.connect(url, read_only=True) as con:
        assert con.execute("SELECT count(*) FROM current_attempts").fetchone() == (6,)
        assert "key_id=lab-key" in con.execute("SELECT secret_string FROM duckdb_secrets()").fetchone()[0]
    prefix = url.split(";data=s3://seqk-lake/")[1]
    s3 = boto3.session.Session().client("s3", endpoint_url=endpoint, aws_access_key_id="x",
                                        aws_secret_access_key="x", region_name="us-east-1")
    assert s3.list_objects_v2(Bucket="seqk-lake", Prefix=prefix).get("KeyCount", 0) > 0
    # `seqk upload` finds the same profile, endpoint included, through boto3's own chain.
    assert runner.invoke(app, ["export", spec.run_id, "--db", url, "--to", str(tmp_path / "out")]).exit_code == 0
    up = runner.invoke(app, ["upload", spec.run_id, "--bucket", "seqk-lake", "--from", str(tmp_path / "out")])
    assert up.exit_code == 0 and "verified" in up.output, up.output
    assert s3.list_objects_v2(Bucket="seqk-lake", Prefix=spec.run_id + "/")["KeyCount"] > 0


def test_a_lake_on_s3_without_credentials_is_one_line_naming_where_they_are_looked_for(lake_servers, no_aws):
    url = new_lake(*lake_servers)
    with pytest.raises(BadInput, match="no AWS credentials were found: set AWS_ACCESS_KEY_ID"), store.connect(url):
        pass
    out = runner.invoke(app, ["status", "--db", url])
    assert out.exit_code == 2 and len(out.output.strip().splitlines()) == 1, out.output


def test_every_lake_and_catalog_statement_runs_through_its_function(lake_url):
    database = store.open(lake_url)
    assert isinstance(database, lake.Lake)
    with database.connect() as con:
        lake_calls: list[tuple[Callable[..., Any], dict[str, Any]]] = [
            (lake_queries.get_data_path, {}), (lake_queries.current_snapshot, {}),
            (lake_queries.count_data_files, {}), (lake_queries.count_snapshots, {}),
            (lake_queries.flush_inlined, {}), (lake_queries.merge_files, {}),
            (lake_queries.expire_snapshots, {"older_than": "2000-01-01"}), (lake_queries.cleanup_files, {})]
        assert {f.__name__ for f, _ in lake_calls} == set(sqlfiles.queries("lake"))
        results = {f.__name__: f(con, **params) for f, params in lake_calls}
    assert results["get_data_path"] == database.data_path and results["current_snapshot"] >= 1
    pg = catalog.connect(database.catalog_dsn)
    try:
        key = catalog.key("test")
        pg_calls: list[tuple[Callable[..., Any], dict[str, Any]]] = [
            (catalog_queries.try_lease_tasks, {"keys": [key]}), (catalog_queries.lock_setup, {"key": key}),
            (catalog_queries.lock_setup_shared, {"key": key}), (catalog_queries.release_all, {})]
        assert {f.__name__ for f, _ in pg_calls} == set(sqlfiles.queries("postgres"))
        assert [f(pg, **params) for f, params in pg_calls] == [0, None, None, None]
        held = pg.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()")
        assert held.fetchone() == (0,)
    finally:
        pg.close()
