"""S3 upload against moto's S3 server on loopback, with the real boto3 client: a verified
upload, skipped re-uploads, and clear failures (wrong credentials, a missing bucket, the
server stopping mid-upload) that exit non-zero, say how to retry and lose nothing local.
Sync before and after `seqk run`: on only with a bucket, checked before the first call."""

from __future__ import annotations

import hashlib
import urllib.request
from pathlib import Path

import boto3
import pytest
from helpers import make_run, write_variant
from moto.server import ThreadedMotoServer
from scripts import solves_on
from typer.testing import CliRunner

from seqk import models
from seqk.cli import app
from seqk.errors import ConfigError
from seqk.io import export, publish, s3, tree

# moto's S3 server on loopback, and runs that upload to it: slow (servers), run by --run-slow, CI and
# the README's test command.
pytestmark = pytest.mark.slow

runner = CliRunner()
BUCKET = "seqk-test"
KEY_ID = "AKIASEQKTESTKEY0001"
SECRET = "seqk-test-secret-never-written-anywhere"


def start_server() -> tuple[ThreadedMotoServer, str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    return server, f"http://{host}:{port}"


def moto_api(url: str, path: str, body: bytes = b"") -> None:
    request = urllib.request.Request(f"{url}/moto-api/{path}", data=body, method="POST",
                                     headers={"Content-Type": "text/plain"})
    urllib.request.urlopen(request).read()


@pytest.fixture
def endpoint(monkeypatch):
    """A fresh moto S3 server with one bucket; boto3 finds it through AWS_ENDPOINT_URL."""
    server, url = start_server()
    moto_api(url, "reset")
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3", "SEQK_S3_SYNC",
                 "SEQK_S3_BUCKET"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL", url)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    boto3.client("s3").create_bucket(Bucket=BUCKET)
    yield url
    server.stop()


def objects(prefix: str) -> dict[str, tuple[int, str]]:
    listing = boto3.client("s3").list_objects_v2(Bucket=BUCKET, Prefix=prefix + "/")
    return {o["Key"][len(prefix) + 1:]: (o["Size"], o["ETag"].strip('"'))
            for o in listing.get("Contents", [])}


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in folder.rglob("*") if p.is_file()}


@pytest.fixture
def exported(tmp_path, db):
    """A finished seq@k run exported beside its database: (run_id, run folder)."""
    models.register_mock("mock/actor", solves_on({1: 1, 2: 3}))
    spec = make_run(tmp_path, db)
    export.export_run(spec.run_id, db)
    return spec.run_id, tree.run_dir(db.parent, spec.run_id)


def upload(run_id: str, db: Path, *more: str):
    return runner.invoke(app, ["upload", run_id, "--bucket", BUCKET, "--db", str(db), *more])


def test_upload_verifies_every_object_and_keeps_config_local(endpoint, exported, db):
    run_id, folder = exported
    result = upload(run_id, db)
    assert result.exit_code == 0, result.output
    local = {rel: data for rel, data in snapshot(folder).items() if rel != "config.json"}
    assert f"uploaded {len(local)} files" in result.output
    assert f"to s3://{BUCKET}/{run_id}/, skipped 0 unchanged; verified {len(local)} objects" \
        in result.output
    assert objects(run_id) == {rel: (len(data), hashlib.md5(data).hexdigest())
                               for rel, data in local.items()}


def test_reupload_skips_unchanged_files(endpoint, exported, db):
    run_id, folder = exported
    assert upload(run_id, db).exit_code == 0
    n = len(snapshot(folder)) - 1
    again = upload(run_id, db)
    assert again.exit_code == 0 and f"uploaded 0 files (0 bytes) to s3://{BUCKET}/{run_id}/, " \
        f"skipped {n} unchanged; verified {n} objects" in again.output
    changed = folder / "task-1" / "task_meta.json"
    changed.write_text(changed.read_text() + " ")
    third = upload(run_id, db)
    assert "uploaded 1 files" in third.output and f"skipped {n - 1} unchanged" in third.output
    assert objects(run_id)["task-1/task_meta.json"][0] == changed.stat().st_size


def test_wrong_credentials_fail_clearly_and_leak_nothing(endpoint, exported, db, monkeypatch):
    run_id, folder = exported
    before = snapshot(folder)
    moto_api(endpoint, "reset-auth", b"0")  # from now on moto checks every signature
    try:
        result = upload(run_id, db)
    finally:
        moto_api(endpoint, "reset-auth", b"inf")
    assert result.exit_code == 1
    assert "rejected the AWS credentials (InvalidAccessKeyId" in result.output
    assert f"the local run at {folder} is intact" in result.output
    assert f"Retry with: seqk upload {run_id} --bucket {BUCKET}" in result.output
    assert KEY_ID not in result.output and SECRET not in result.output
    assert snapshot(folder) == before


def test_a_missing_bucket_fails_clearly(endpoint, exported, db):
    run_id, folder = exported
    before = snapshot(folder)
    result = runner.invoke(app, ["upload", run_id, "--bucket", "no-such-bucket", "--db", str(db)])
    assert result.exit_code == 1
    assert "bucket 'no-such-bucket' does not exist at http://127.0.0.1:" in result.output
    assert "Retry with: seqk upload" in result.output and snapshot(folder) == before


@pytest.mark.slow
def test_server_stopped_mid_upload_then_retry_uploads_the_rest(exported, db, monkeypatch):
    server, url = start_server()
    monkeypatch.setenv("AWS_ENDPOINT_URL", url)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    moto_api(url, "reset")
    boto3.client("s3").create_bucket(Bucket=BUCKET)
    run_id, folder = exported
    before = snapshot(folder)
    reads = []
    real_read = s3._read

    def read_then_stop(path: Path) -> bytes:
        reads.append(path)
        if len(reads) == 2:  # the first object is in; the server goes away now
            server.stop()
        return real_read(path)

    monkeypatch.setattr(s3, "_read", read_then_stop)
    result = upload(run_id, db)
    assert result.exit_code == 1
    assert f"could not reach {url}" in result.output
    assert f"1 of {len(before) - 1} files were uploaded before the failure" in result.output
    assert f"Retry with: seqk upload {run_id} --bucket {BUCKET}" in result.output
    assert snapshot(folder) == before

    # moto keeps its buckets in-process: a new server on another port sees the first object.
    monkeypatch.setattr(s3, "_read", real_read)
    server, url = start_server()
    monkeypatch.setenv("AWS_ENDPOINT_URL", url)
    try:
        retry = upload(run_id, db)
    finally:
        server.stop()
    assert retry.exit_code == 0, retry.output
    assert f"uploaded {len(before) - 2} files" in retry.output
    assert "skipped 1 unchanged" in retry.output


def test_an_object_that_differs_after_upload_fails_verification(endpoint, exported, db,
                                                                  monkeypatch):
    run_id, folder = exported
    real = s3._listing
    calls = []

    def listing(client, bucket, prefix):
        found = real(client, bucket, prefix)
        calls.append(1)
        if len(calls) == 2:
            key = f"{prefix}/summary.json"
            found[key] = (found[key][0] + 1, "0" * 32)
        return found

    monkeypatch.setattr(s3, "_listing", listing)
    result = upload(run_id, db)
    assert result.exit_code == 1 and "could not be verified: 1 of" in result.output
    assert f"{run_id}/summary.json (size" in result.output


def test_upload_needs_an_exported_folder_and_a_bucket(tmp_path, db, monkeypatch):
    monkeypatch.delenv("SEQK_S3_BUCKET", raising=False)
    nobucket = runner.invoke(app, ["upload", "a/b/c/d/e", "--db", str(db)])
    assert nobucket.exit_code == 2 and "no bucket: pass --bucket or set SEQK_S3_BUCKET" \
        in nobucket.output
    missing = runner.invoke(app, ["upload", "a/b/c/d/e", "--bucket", BUCKET, "--db", str(db)])
    assert missing.exit_code == 2 and "run `seqk export a/b/c/d/e` first" in missing.output


def spec_with(tmp_path, **keys):
    """The run and this invocation's settings, read from a variant with these keys."""
    from seqk.config import runspec

    keys = {"benchmark": "toy", "metric": "seq@k", "k": 2, "model": "mock/actor",
            "options": {"n": 2}} | keys
    return runspec.load_with_settings(write_variant(tmp_path, **keys))


def test_sync_is_on_only_with_a_bucket_and_turns_off_three_ways(tmp_path, monkeypatch):
    models.register_mock("mock/actor", ["w1"])
    monkeypatch.delenv("SEQK_S3_BUCKET", raising=False)
    monkeypatch.delenv("SEQK_S3_SYNC", raising=False)
    assert publish.sync_bucket(*spec_with(tmp_path), no_upload=False) is None
    assert publish.sync_bucket(*spec_with(tmp_path, s3_bucket="b1"), no_upload=False) == "b1"
    monkeypatch.setenv("SEQK_S3_BUCKET", "b2")
    assert publish.sync_bucket(*spec_with(tmp_path), no_upload=False) == "b2"
    assert publish.sync_bucket(*spec_with(tmp_path), no_upload=True) is None
    assert publish.sync_bucket(*spec_with(tmp_path, s3_sync=False), no_upload=False) is None
    monkeypatch.setenv("SEQK_S3_SYNC", "0")
    assert publish.sync_bucket(*spec_with(tmp_path), no_upload=False) is None
    monkeypatch.delenv("SEQK_S3_SYNC")
    monkeypatch.delenv("SEQK_S3_BUCKET")
    with pytest.raises(ConfigError, match="s3_sync: is true, but no bucket is configured"):
        publish.sync_bucket(*spec_with(tmp_path, s3_sync=True), no_upload=False)


def test_run_checks_s3_before_the_first_call_and_uploads_at_the_end(endpoint, tmp_path, db):
    actor = models.register_mock("mock/actor", solves_on({1: 1}))
    bad = write_variant(tmp_path, "bad.yaml", benchmark="toy", metric="seq@k", k=2,
                        model="mock/actor", options={"n": 2}, s3_bucket="no-such-bucket")
    result = runner.invoke(app, ["run", str(bad), "--db", str(db)])
    assert result.exit_code == 1 and actor.calls == 0 and not db.exists()
    assert "S3 sync is on, but bucket 'no-such-bucket' does not exist" in result.output
    assert "--no-upload, `s3_sync: false` in the variant, or SEQK_S3_SYNC=0" in result.output

    good = write_variant(tmp_path, "good.yaml", benchmark="toy", metric="seq@k", k=2,
                         model="mock/actor", options={"n": 2}, s3_bucket=BUCKET)
    result = runner.invoke(app, ["run", str(good), "--db", str(db)])
    assert result.exit_code == 0, result.output
    run_id = "toy-plain/seqk/mock__actor/deterministic/binary"
    assert f"to s3://{BUCKET}/{run_id}/" in result.output
    folder = tree.run_dir(db.parent, run_id)
    assert set(objects(run_id)) == set(snapshot(folder)) - {"config.json"}
    assert s3.CHECK_KEY not in str(objects(run_id))
    # No credential anywhere: not in the output, the export or the database file.
    for blob in [result.output.encode(), db.read_bytes(), *snapshot(folder).values()]:
        assert KEY_ID.encode() not in blob and SECRET.encode() not in blob


def test_run_with_wrong_credentials_stops_before_any_call(endpoint, tmp_path, db):
    actor = models.register_mock("mock/actor", solves_on({1: 1}))
    variant = write_variant(tmp_path, benchmark="toy", metric="seq@k", k=2, model="mock/actor",
                            options={"n": 2}, s3_bucket=BUCKET)
    moto_api(endpoint, "reset-auth", b"0")
    try:
        result = runner.invoke(app, ["run", str(variant), "--db", str(db)])
        assert result.exit_code == 1 and actor.calls == 0
        assert "rejected the AWS credentials" in result.output
        skipped = runner.invoke(app, ["run", str(variant), "--db", str(db), "--no-upload"])
    finally:
        moto_api(endpoint, "reset-auth", b"inf")
    assert skipped.exit_code == 0, skipped.output
    assert actor.calls > 0


def test_a_failed_upload_at_the_end_of_a_run_keeps_the_run_and_says_how_to_retry(
        endpoint, tmp_path, db):
    def actor_losing_the_bucket(prompt: str) -> str:
        # The check before the run passed; the bucket goes away while the run works.
        client = boto3.client("s3")
        if client.list_buckets()["Buckets"]:
            client.delete_bucket(Bucket=BUCKET)
        return "wrong"

    models.register_mock("mock/actor", actor_losing_the_bucket)
    variant = write_variant(tmp_path, benchmark="toy", metric="pass@k", k=1, model="mock/actor",
                            options={"n": 2}, s3_bucket=BUCKET)
    result = runner.invoke(app, ["run", str(variant), "--db", str(db)])
    run_id = "toy-plain/passk/mock__actor/deterministic/binary"
    assert result.exit_code == 1
    assert "2 attempts written" in result.output and f"exported {run_id}" in result.output
    assert f"bucket '{BUCKET}' does not exist" in result.output
    assert f"Retry with: seqk upload {run_id} --bucket {BUCKET}" in result.output
    folder = tree.run_dir(db.parent, run_id)
    assert (folder / "task-2" / "attempt-1.json").is_file()
    boto3.client("s3").create_bucket(Bucket=BUCKET)
    retry = upload(run_id, db)
    assert retry.exit_code == 0 and "uploaded" in retry.output, retry.output
