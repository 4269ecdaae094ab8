"""Providers' batch APIs behind one small interface: submit requests, poll, read results.

    openai/...     OpenAIBatch      files + batches (api.openai.com, or any server at api_base
                                    that speaks them: vLLM, a proxy, the tests' fake)
    anthropic/...  AnthropicBatch   Message Batches (litellm cannot create them)

Each SDK is imported when a batch is first needed, never by `import seqk`. What to batch and when
(rounds), and the record that keeps a batch from being paid twice, live in seqk.run.rounds.
"""

from __future__ import annotations

import importlib.util
import sys

from seqk.models.batch.base import (
    FINAL_STATES,
    BatchProvider,
    BatchRequest,
    BatchStatus,
    ItemResult,
    missing_sdk,
)
from seqk.models.role import RoleSpec

__all__ = [
    "BatchProvider", "BatchRequest", "BatchStatus", "FINAL_STATES", "ItemResult", "batch_problem", "batch_provider",
    "sdk_problem",
]


def batch_problem(role: RoleSpec) -> str | None:
    """Why the role's model has no batch API seqk can use, or None."""
    model = role.model or ""
    if model.startswith(("openai/", "anthropic/")):
        return None
    return (f"{model or 'no model'} has no batch API seqk can reach: batch works with openai/... "
            "(api.openai.com or an api_base that serves /v1/files and /v1/batches) and anthropic/... models")


def batch_provider(role: RoleSpec) -> BatchProvider:
    """The batch API that serves the role's model (batch_problem(role) is None)."""
    assert role.model is not None
    if role.model.startswith("anthropic/"):
        from seqk.models.batch.anthropic import AnthropicBatch

        return AnthropicBatch(role.api_base, role.api_key_env)
    from seqk.models.batch.openai import OpenAIBatch

    return OpenAIBatch(role.api_base, role.api_key_env)


def sdk_problem(role: RoleSpec) -> str | None:
    """What a batched role lacks on this machine (its provider's SDK, the `batch` extra), or None.
    Nothing is imported: `seqk plan` and `seqk run` ask before anything is registered."""
    if not role.batch or role.model is None or batch_problem(role) is not None:
        return None
    sdk = "anthropic" if role.model.startswith("anthropic/") else "openai"
    if sdk in sys.modules:  # imported, or blocked (None)
        return None if sys.modules[sdk] is not None else missing_sdk(sdk)
    return None if importlib.util.find_spec(sdk) is not None else missing_sdk(sdk)
