"""After a run: the seq_k folder tree written and, when asked, uploaded to S3 (checked before
the first call, so a missing bucket or permission is found before anything is spent)."""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from seqk import store
from seqk.errors import BadInput, ConfigError, ConfigIssue, NotFound, UploadError
from seqk.io import tree

if TYPE_CHECKING:
    from seqk.config.spec import RunSettings, RunSpec
    from seqk.io.s3 import UploadResult

# export and s3 are imported where they are used: `seqk run` checks its output paths with this
# module before its first call, and needs neither until the run has ended.

_SYNC_OFF = {"0", "false", "no", "off"}
__all__ = ["UploadError", "UploadResult", "after_run", "describe_upload", "preflight", "sync_bucket", "upload"]


def __getattr__(name: str) -> Any:
    if name == "UploadResult":
        from seqk.io.s3 import UploadResult

        return UploadResult
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def sync_bucket(spec: RunSpec, settings: RunSettings, *, no_upload: bool) -> str | None:
    """The bucket to upload the run to at its end, or None when sync is off."""
    if no_upload or settings.s3_sync is False:
        return None
    if os.environ.get("SEQK_S3_SYNC", "").strip().lower() in _SYNC_OFF:
        return None
    bucket = settings.s3_bucket or os.environ.get("SEQK_S3_BUCKET") or None
    if bucket is None and settings.s3_sync:
        raise ConfigError(spec.source, [ConfigIssue(
            "S01", "s3_sync", "is true, but no bucket is configured: set s3_bucket in the "
            "variant or SEQK_S3_BUCKET")])
    return bucket


def preflight(spec: RunSpec, settings: RunSettings, db: store.Database, *,
              no_upload: bool, no_export: bool = False) -> None:
    """Before the first LLM call: every output path can be written (the database, the export
    folder), and when sync is on, credentials and bucket access are good."""
    problem = db.writable_problem()
    if problem:
        raise BadInput(f"the database {db} cannot be written: {problem}")
    if not no_export:
        root = Path(settings.export_dir) if settings.export_dir else db.home
        problem = tree.unwritable_folder(root.absolute())
        if problem and settings.export_dir:
            raise ConfigError(spec.source, [ConfigIssue(
                "C03", "export_dir", f"expected a folder seqk can write the run's files into: {problem}")])
        if problem:
            raise BadInput(f"the run's export folder {root} cannot be written: {problem} "
                           f"(set export_dir, or pass --no-export)")
    bucket = sync_bucket(spec, settings, no_upload=no_upload)
    if bucket is not None:
        from seqk.io.s3 import check_access

        check_access(bucket, spec.run_id)


def _retry_command(run_id: str, bucket: str, root: Path) -> str:
    from seqk.io.export import export_root

    words = ["seqk", "upload", run_id, "--bucket", bucket]
    # `seqk upload` without --from looks beside the default database.
    if root.resolve() != export_root().resolve():
        words += ["--from", str(root)]
    return shlex.join(words)


def upload(run_id: str, *, bucket: str | None = None, root: str | os.PathLike[str] | None = None,
           db: store.DbLike = None) -> UploadResult:
    """Upload an exported run folder to s3://<bucket>/<run_id>/ (config.json stays local).

    Example: upload("toy-plain/seqk/mock__actor/deterministic/binary", bucket="my-bucket")
    """
    bucket = bucket or os.environ.get("SEQK_S3_BUCKET") or None
    if bucket is None:
        raise ConfigError("seqk upload", [ConfigIssue(
            "S01", "--bucket", "no bucket: pass --bucket or set SEQK_S3_BUCKET")])
    from seqk.io.export import export_root
    from seqk.io.s3 import upload_dir

    run_id = run_id.strip("/")
    folder_root = Path(root) if root is not None else export_root(db)
    folder = tree.run_dir(folder_root, run_id)
    if not folder.is_dir():
        raise NotFound(f"no exported run folder at {folder}; run `seqk export {run_id}` first "
                       f"(or point --from at the folder that holds it)")
    return upload_dir(folder, bucket, run_id,
                      retry=_retry_command(run_id, bucket, folder_root))


def describe_upload(result: UploadResult) -> str:
    """One line for the user."""
    line = (f"uploaded {len(result.uploaded)} files ({result.bytes_uploaded} bytes) to "
            f"{result.url}, skipped {len(result.skipped)} unchanged; verified "
            f"{result.verified} objects by size and ETag")
    if result.extra_remote:
        line += (f"; {len(result.extra_remote)} objects under that prefix have no local file "
                 f"(left in place)")
    return line


def after_run(spec: RunSpec, settings: RunSettings, db: store.Database, *,
              no_export: bool, no_upload: bool, report: Callable[[str], None]) -> None:
    """After `seqk run`: export the run's folder tree, then upload it when sync is on."""
    from seqk.io.export import export_run
    from seqk.io.s3 import upload_dir

    root = Path(settings.export_dir) if settings.export_dir else db.home
    bucket = sync_bucket(spec, settings, no_upload=no_upload)
    if not no_export:
        report(export_run(spec.run_id, db, to=root).describe())
    if bucket is None:
        return
    folder = tree.run_dir(root, spec.run_id)
    if not folder.is_dir():
        report(f"upload skipped: nothing exported at {folder} (--no-export); run "
               f"`seqk export {spec.run_id}` then `seqk upload {spec.run_id}`")
        return
    result = upload_dir(folder, bucket, spec.run_id,
                        retry=_retry_command(spec.run_id, bucket, root))
    report(describe_upload(result))
