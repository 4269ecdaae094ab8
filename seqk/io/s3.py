"""The one door to S3: check access before a run, upload a run folder after it.

boto3 is imported inside the functions, so `import seqk` and `seqk --help` never load
it. The client finds credentials the usual boto3 way (environment, AWS_PROFILE, SSO,
instance role) and an S3-compatible endpoint in AWS_ENDPOINT_URL (or
AWS_ENDPOINT_URL_S3), which boto3 reads by itself since 1.28.

Every object is sent with one PutObject carrying Content-MD5, so S3 refuses a body
damaged in transit and the object's ETag is the file's MD5. After the upload the
prefix is listed again and every file is checked by presence, size and ETag. A file
whose object already has the same size and MD5 is skipped. Nothing is ever deleted.

No credential is written anywhere: error messages are scrubbed of the key id, the
secret and the session token before they leave this module.
"""

from __future__ import annotations

import base64
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seqk.errors import UploadError
from seqk.io.tree import is_temp

CHECK_KEY = ".seqk-access-check"
_CREDENTIAL_CODES = {
    "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken",
    "TokenRefreshRequired", "AuthorizationHeaderMalformed", "InvalidClientTokenId",
}
_DENIED_CODES = {"AccessDenied", "403", "AllAccessDisabled", "Forbidden"}
_MISSING_CODES = {"NoSuchBucket", "404", "NotFound"}


@dataclass
class UploadResult:
    """What one upload did."""

    bucket: str
    prefix: str
    endpoint: str | None
    uploaded: list[str] = field(default_factory=list)
    """Files sent now (paths relative to the run folder)."""
    skipped: list[str] = field(default_factory=list)
    """Files whose object already had the same size and MD5."""
    bytes_uploaded: int = 0
    verified: int = 0
    """Objects checked after the upload by size and ETag."""
    extra_remote: list[str] = field(default_factory=list)
    """Objects under the prefix with no local file (left in place)."""

    @property
    def url(self) -> str:
        """s3://bucket/prefix/"""
        return f"s3://{self.bucket}/{self.prefix}/"


def _client() -> Any:
    import boto3
    from botocore.config import Config

    # Standard retries (3 attempts unless AWS_MAX_ATTEMPTS says otherwise) back off on
    # throttling and 5xx, then let the failure surface instead of hanging for minutes.
    config = Config(retries={"mode": "standard"}, connect_timeout=10, read_timeout=60)
    # A session of its own, not boto3's default one: that one reads the environment and the AWS
    # config file once, so a notebook that switched AWS_PROFILE since would upload as the old one.
    return boto3.session.Session().client("s3", config=config)


def _scrub(text: str, s3: Any = None) -> str:
    secrets = {os.environ.get(name) for name in
               ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")}
    try:
        creds = s3._request_signer._credentials if s3 is not None else None
        if creds is not None:
            secrets |= {creds.access_key, creds.secret_key, creds.token}
    except AttributeError:
        pass
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


def _explain(exc: BaseException, s3: Any, bucket: str, prefix: str) -> str:
    """One sentence a user can act on, for any boto3/botocore failure."""
    from botocore.exceptions import (
        ClientError,
        EndpointConnectionError,
        NoCredentialsError,
        PartialCredentialsError,
    )

    endpoint = getattr(getattr(s3, "meta", None), "endpoint_url", None) or "the S3 endpoint"
    where = f"s3://{bucket}/{prefix}/"
    if isinstance(exc, NoCredentialsError | PartialCredentialsError):
        return ("no usable AWS credentials found: set AWS_ACCESS_KEY_ID and "
                "AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, or sign in (aws sso login)")
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        code = str(error.get("Code", ""))
        message = _scrub(str(error.get("Message", "")), s3)
        if code in _CREDENTIAL_CODES:
            return (f"{endpoint} rejected the AWS credentials ({code}: {message}); check "
                    f"AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or AWS_PROFILE, or sign in again")
        if code in _MISSING_CODES:
            return (f"bucket {bucket!r} does not exist at {endpoint}; create it, or set the "
                    f"bucket in the variant (s3_bucket), SEQK_S3_BUCKET or --bucket")
        if code in _DENIED_CODES:
            return (f"access denied to {where} ({code}: {message}); the credentials need "
                    f"s3:ListBucket and s3:PutObject on it")
        return f"S3 refused a request for {where} ({code}: {message})"
    if isinstance(exc, EndpointConnectionError):
        return f"could not reach {endpoint} ({_scrub(str(exc), s3)})"
    return f"S3 request for {where} failed: {_scrub(str(exc), s3)}"


def _boto_errors() -> tuple[type[BaseException], ...]:
    from botocore.exceptions import BotoCoreError, ClientError

    return (BotoCoreError, ClientError)


def check_access(bucket: str, prefix: str) -> None:
    """Check credentials and bucket access (list, write, delete a check object) up front.

    Raises UploadError with what is wrong, so a run stops before its first LLM call.
    """
    s3 = _client()
    key = f"{prefix}/{CHECK_KEY}"
    try:
        s3.list_objects_v2(Bucket=bucket, Prefix=f"{prefix}/", MaxKeys=1)
        s3.put_object(Bucket=bucket, Key=key, Body=b"seqk access check\n")
    except _boto_errors() as exc:
        raise UploadError(
            f"S3 sync is on, but {_explain(exc, s3, bucket, prefix)}. Nothing was run. Fix "
            f"that, or run without uploading: --no-upload, `s3_sync: false` in the variant, "
            f"or SEQK_S3_SYNC=0.") from None
    try:
        s3.delete_object(Bucket=bucket, Key=key)
    except _boto_errors():
        # Deleting is not needed for uploads (seqk never deletes); a stray check
        # object is harmless and overwritten by the next check.
        pass


def local_files(folder: Path,
                exclude: tuple[str, ...] = ("config.json",)) -> list[tuple[str, Path]]:
    """(relative posix path, path) of every file to upload, sorted; `exclude` is top-level only."""
    found = []
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or is_temp(path):
            continue
        rel = path.relative_to(folder).as_posix()
        if rel in exclude:
            continue
        found.append((rel, path))
    return found


def _read(path: Path) -> bytes:
    return path.read_bytes()


def _md5(data: bytes) -> Any:
    return hashlib.md5(data, usedforsecurity=False)


def _listing(s3: Any, bucket: str, prefix: str) -> dict[str, tuple[int, str]]:
    """key -> (size, ETag without quotes) of every object under prefix/."""
    found: dict[str, tuple[int, str]] = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=f"{prefix}/"):
        for obj in page.get("Contents", []):
            found[obj["Key"]] = (int(obj["Size"]), str(obj.get("ETag", "")).strip('"'))
    return found


def upload_dir(folder: Path, bucket: str, prefix: str, *, retry: str) -> UploadResult:
    """Upload folder/ to s3://bucket/prefix/ (config.json excluded), then verify every object.

    `retry` is the command that retries; a failure's message ends with it.
    """
    prefix = prefix.strip("/")
    files = local_files(folder)
    s3 = _client()
    result = UploadResult(bucket, prefix, getattr(s3.meta, "endpoint_url", None))
    expected: dict[str, tuple[int, str, str]] = {}
    try:
        remote = _listing(s3, bucket, prefix)
        for rel, path in files:
            body = _read(path)
            digest = _md5(body)
            key = f"{prefix}/{rel}"
            if remote.get(key) == (len(body), digest.hexdigest()):
                result.skipped.append(rel)
                expected[key] = (len(body), digest.hexdigest(), digest.hexdigest())
            else:
                response = s3.put_object(
                    Bucket=bucket, Key=key, Body=body, ContentType="application/json",
                    ContentMD5=base64.b64encode(digest.digest()).decode("ascii"))
                # With SSE-KMS the ETag is not the MD5; then the ETag S3 just
                # returned is what the listing must show.
                etag = str(response.get("ETag", "")).strip('"')
                expected[key] = (len(body), digest.hexdigest(), etag)
                result.uploaded.append(rel)
                result.bytes_uploaded += len(body)
        after = _listing(s3, bucket, prefix)
    except _boto_errors() as exc:
        raise UploadError(
            f"upload to s3://{bucket}/{prefix}/ failed: {_explain(exc, s3, bucket, prefix)}. "
            f"{len(result.uploaded)} of {len(files)} files were uploaded before the failure; "
            f"the local run at {folder} is intact. Retry with: {retry}") from None
    bad = []
    for key, (size, md5, etag) in expected.items():
        have = after.get(key)
        if have is None:
            bad.append(f"{key} (missing)")
        elif have[0] != size or have[1] not in (md5, etag):
            bad.append(f"{key} (size {have[0]} vs {size}, ETag {have[1]} vs {md5})")
    if bad:
        shown = "; ".join(bad[:5]) + (f"; and {len(bad) - 5} more" if len(bad) > 5 else "")
        raise UploadError(
            f"upload to s3://{bucket}/{prefix}/ could not be verified: {len(bad)} of "
            f"{len(expected)} objects differ from the local files: {shown}. The local run at "
            f"{folder} is intact. Retry with: {retry}")
    result.verified = len(expected)
    result.extra_remote = sorted(k for k in after if k not in expected and
                                 not k.endswith(f"/{CHECK_KEY}"))
    return result
