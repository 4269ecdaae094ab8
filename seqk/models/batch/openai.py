"""OpenAI's Batch API (and servers that copy it): upload the requests as a JSONL file, create a
batch over it, poll it, read its output and error files. Through the openai SDK, imported here."""

from __future__ import annotations

import json
from typing import Any

from seqk.errors import PermanentProviderError, ProviderError, TransientProviderError
from seqk.models.batch.base import BatchRequest, BatchStatus, ItemResult, SdkBatch
from seqk.models.openai_http import parse_chat_completion, request_body

_STATES = {"validating": "in_progress", "in_progress": "in_progress", "finalizing": "in_progress",
           "cancelling": "in_progress", "completed": "ended", "failed": "failed",
           "expired": "expired", "cancelled": "cancelled"}


def item_error(status: int | None, code: str | None, message: str) -> ProviderError:
    """An item's failure: expiry, a rate limit and server errors are worth another batch."""
    text = f"batch item failed ({code or status}): {message}"[:2000]
    if code == "batch_expired":
        return TransientProviderError(text, kind="BatchExpired")
    if status is not None and (status == 429 or status >= 500):
        return TransientProviderError(text, status_code=status, kind="BatchItemError")
    return PermanentProviderError(text, status_code=status, kind="BatchItemError")


class OpenAIBatch(SdkBatch):
    """/v1/files + /v1/batches at api.openai.com or at a role's api_base."""

    name = "openai"
    sdk = "openai"
    key_env = "OPENAI_API_KEY"
    max_items = 50_000
    max_bytes = 200 * 1024 * 1024

    def new_client(self, module: Any, key: str | None) -> Any:
        # A server that copies the API at a role's api_base may need no key.
        return module.AsyncOpenAI(base_url=self.api_base, api_key=key or ("no-key-needed" if self.api_base else None),
                                  max_retries=3)

    def line(self, request: BatchRequest) -> str:
        """The request as one line of the batch's input file."""
        return json.dumps({"custom_id": request.custom_id, "method": "POST",
                           "url": "/v1/chat/completions",
                           "body": request_body(request.spec, request.prompt)}, ensure_ascii=False)

    def request_bytes(self, request: BatchRequest) -> int:
        """Bytes of the request's line."""
        return len(self.line(request).encode()) + 1

    async def submit(self, requests: list[BatchRequest], key: str) -> str:
        """Upload the input file and create the batch, tagged with `key` in its metadata."""
        data = "".join(self.line(r) + "\n" for r in requests).encode()
        client = self.client()
        upload = await client.files.create(file=("seqk-batch.jsonl", data), purpose="batch")
        batch = await client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions",
                                            completion_window="24h", metadata={"seqk_key": key})
        return str(batch.id)

    async def find(self, key: str, n_items: int, since_unix: float) -> str | None:
        """The batch whose metadata holds `key`, among those created since `since_unix`."""
        async for batch in self.client().batches.list(limit=100):
            if (batch.metadata or {}).get("seqk_key") == key:
                return str(batch.id)
            if batch.created_at < since_unix - 3600:  # listed newest first
                break
        return None

    async def poll(self, batch_id: str) -> BatchStatus:
        """The batch's state and counts."""
        batch = await self.client().batches.retrieve(batch_id)
        counts = batch.request_counts
        done = (counts.completed + counts.failed) if counts else 0
        return BatchStatus(_STATES.get(batch.status, "in_progress"), done, counts.total if counts else 0)

    async def results(self, batch_id: str) -> dict[str, ItemResult]:
        """Every item of the output file (answers and per-item errors) and of the error file."""
        client = self.client()
        batch = await client.batches.retrieve(batch_id)
        out: dict[str, ItemResult] = {}
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            content = await client.files.content(file_id)
            for raw in content.text.splitlines():
                if raw.strip():
                    item = self.parse(json.loads(raw))
                    out[item.custom_id] = item
        return out

    def parse(self, row: dict[str, Any]) -> ItemResult:
        """One line of an output or error file."""
        custom_id = row["custom_id"]
        response = row.get("response") or {}
        error = row.get("error")
        status = response.get("status_code")
        if error or status is None or status >= 400:
            body = response.get("body") or {}
            detail = error or body.get("error") or {}
            return ItemResult(custom_id, error=item_error(status, detail.get("code"),
                                                          detail.get("message") or str(detail)))
        body = response["body"]
        return ItemResult(custom_id, parse_chat_completion(body, "openai/" + str(body.get("model")), 0.0))
