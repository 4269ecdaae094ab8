"""`local/...` models: worker processes of seqk.models.local.workers, reached over the OpenAI-compatible path."""

from __future__ import annotations

import asyncio

from seqk.errors import ProviderError
from seqk.models.base import FREE, Completion
from seqk.models.openai_http import chat_completion, classify_http
from seqk.models.pricing import Price
from seqk.models.role import RoleSpec
from seqk.records import Prompt


class LocalProvider:
    """The embedded model: llama.cpp in worker processes of its own (imported only when used)."""

    name = "local"

    def serves(self, model: str, api_base: str | None) -> bool:
        """Every `local/...` id."""
        return model.startswith("local/")

    async def call(self, spec: RoleSpec, prompt: Prompt, cache_prefix: str | None = None) -> Completion:
        """One call on a leased worker; a worker that died becomes LocalModelCrashed (or a timeout)."""
        from seqk.models.local import workers

        assert spec.model is not None
        local = workers.server(spec.model, spec.max_concurrency)
        async with local.lease() as worker:
            try:
                return await chat_completion(spec, prompt, worker.api_base)
            except Exception as exc:
                failure = await asyncio.to_thread(local.failure, worker, exc, spec.timeout_s)
                if failure is None:
                    raise
                raise failure from exc

    def model_problem(self, model: str, api_base: str | None) -> str | None:
        """None: whether the model's file is there is `check_installed`'s question."""
        return None

    def classify(self, exc: BaseException) -> ProviderError:
        """As an OpenAI-compatible server's (the worker is one); a dead worker was already made
        LocalModelCrashed by `call`."""
        return classify_http(exc)

    def credential_problem(self, role: RoleSpec) -> str | None:
        """None: a local model needs no key."""
        return None

    def ensure_ready(self, role: RoleSpec) -> None:
        """MissingExtra when the file or llama-cpp-python is missing; LocalModelCrashed when a
        worker dies generating a few tokens."""
        from seqk.models.local import workers

        assert role.model is not None
        workers.ensure_ready(role.model, role.max_concurrency)

    def check_installed(self, role: RoleSpec) -> None:
        """MissingExtra when the GGUF file or llama-cpp-python is missing; nothing is loaded."""
        from seqk.models.local import workers

        assert role.model is not None
        workers.check(role.model)

    def import_client(self) -> None:
        """Nothing: ensure_ready has started the workers."""

    def price(self, model: str) -> Price | None:
        """Free: the machine is already paid for."""
        return FREE
