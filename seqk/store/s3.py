"""A lake session's S3 access: the AWS credential chain, as `seqk upload` (boto3) finds it.

DuckDB's `credential_chain` secret provider (the `aws` extension) asks the AWS SDK's chain:
environment variables, the profile of $AWS_PROFILE in ~/.aws/config and ~/.aws/credentials (or
$AWS_CONFIG_FILE, $AWS_SHARED_CREDENTIALS_FILE), SSO, web identity, an instance or container
role; it refreshes expiring credentials by itself. What the SDK leaves to boto3, seqk reads as
boto3 does: the region ($AWS_REGION, $AWS_DEFAULT_REGION, else the profile's `region`) and an
S3-compatible endpoint ($AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, else the profile's `services`
s3 `endpoint_url` or its own `endpoint_url`). So one set of settings serves both the lake and
the upload. The secret lives in the session's memory only, never in the lake or a file.
"""

from __future__ import annotations

import configparser
import os
from pathlib import Path

import duckdb

from seqk.errors import BadInput
from seqk.store.execute import Connection

SOURCES = ("AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, a profile (AWS_PROFILE, ~/.aws/config and "
           "~/.aws/credentials), SSO (aws sso login), or an instance role")
"""Where the chain looks, for the message when it finds nothing."""


def profile_settings() -> dict[str, str]:
    """The active profile's settings from the AWS config file ({} when there is none)."""
    path = Path(os.environ.get("AWS_CONFIG_FILE") or Path.home() / ".aws" / "config").expanduser()
    profile = os.environ.get("AWS_PROFILE") or os.environ.get("AWS_DEFAULT_PROFILE") or "default"
    parser = configparser.RawConfigParser()
    try:
        parser.read(path)
    except (OSError, configparser.Error):
        return {}
    section = "default" if profile == "default" else f"profile {profile}"
    if not parser.has_section(section):
        return {}
    settings = dict(parser.items(section))
    services = settings.get("services")
    if services and parser.has_section(f"services {services}"):
        # `s3 =` followed by indented `endpoint_url = ...` lines: one value holding them.
        nested = dict(parser.items(f"services {services}")).get("s3", "")
        for line in nested.splitlines():
            name, _, value = line.partition("=")
            if name.strip() == "endpoint_url" and value.strip():
                settings["s3_endpoint_url"] = value.strip()
    return settings


def endpoint_and_region() -> tuple[str | None, str | None]:
    """The S3 endpoint URL (None: AWS's own) and the region (None: the SDK's default)."""
    profile = profile_settings()
    endpoint = (os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
                or profile.get("s3_endpoint_url") or profile.get("endpoint_url") or None)
    region = (os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
              or profile.get("region") or None)
    return endpoint, region


def _literal(value: str) -> str:
    # DuckDB's CREATE SECRET takes literals only, not parameters: quoted here.
    return "'" + value.replace("'", "''") + "'"


def create_secret(con: Connection) -> None:
    """This session's S3 secret from the credential chain; BadInput when the chain finds none."""
    endpoint, region = endpoint_and_region()
    options = ["TYPE s3", "PROVIDER credential_chain", "REFRESH 'auto'"]
    if region:
        options.append(f"REGION {_literal(region)}")
    if endpoint:
        scheme, _, host = endpoint.partition("://")
        options += [f"ENDPOINT {_literal(host.rstrip('/'))}", "URL_STYLE 'path'",
                    f"USE_SSL {'true' if scheme == 'https' else 'false'}"]
    try:
        con.execute("CREATE OR REPLACE SECRET seqk_s3 (" + ", ".join(options) + ")")
    except duckdb.Error as exc:
        if "Secret Validation" not in str(exc):
            raise
        raise BadInput(f"the lake's data is on S3, and no AWS credentials were found: set {SOURCES}") from None
