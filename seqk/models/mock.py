"""`mock/...` models: scripted replies for tests and benchmarks of the harness; free, need nothing."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from seqk.errors import PermanentProviderError, ProviderError
from seqk.models.base import FREE, Completion
from seqk.models.pricing import Price
from seqk.models.retry import classify
from seqk.models.role import RoleSpec
from seqk.records import Prompt

_TOKEN = re.compile(r"\w+|[^\w\s]")

MockReply = str | BaseException | Callable[[str], "str | Awaitable[str]"]


def count_tokens(text: str) -> int:
    """Mock token count: words and punctuation marks. Honest about the text, unlike a constant."""
    return len(_TOKEN.findall(text))


@dataclass
class MockModel:
    """Scripted replies: a function of the prompt, or a list served in call order
    (the last one repeats). An exception in the script is raised, as a provider would. A
    function with a `seed` parameter also gets the call's seed (None when unseeded), so a
    script can sample differently per seed as a real model would."""

    replies: Sequence[MockReply] | Callable[[str], Any]
    latency_s: float = 0.0
    calls: int = 0

    async def reply(self, prompt: str, seed: int | None = None) -> str:
        """The next scripted reply to `prompt`."""
        n = self.calls
        self.calls += 1
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        script = self.replies
        item: Any = script if callable(script) else script[min(n, len(script) - 1)]
        if isinstance(item, BaseException):
            raise item
        if callable(item):
            item = item(prompt, seed=seed) if _takes_seed(item) else item(prompt)
            if inspect.isawaitable(item):
                item = await item
        return str(item)


def _takes_seed(script: Callable[..., Any]) -> bool:
    try:
        return "seed" in inspect.signature(script).parameters
    except (TypeError, ValueError):  # a builtin without a signature
        return False


_MOCKS: dict[str, MockModel] = {}
_BUILTIN_MOCKS: dict[str, Callable[[], MockModel]] = {
    "mock/echo": lambda: MockModel(lambda prompt: prompt),
    "mock/wrong": lambda: MockModel(["[[-1]]"]),
}


def register_mock(model: str, replies: Sequence[MockReply] | Callable[[str], Any],
                  latency_s: float = 0.0) -> MockModel:
    """Make `model` (a `mock/...` id) answer with a script; returns the mock for inspection."""
    if not model.startswith("mock/"):
        raise ValueError(f"mock model ids start with 'mock/': {model!r}")
    mock = MockModel(replies, latency_s)
    _MOCKS[model] = mock
    return mock


def clear_mocks() -> None:
    """Forget every registered mock."""
    _MOCKS.clear()


def _mock_for(model: str) -> MockModel:
    if model in _MOCKS:
        return _MOCKS[model]
    if model in _BUILTIN_MOCKS:
        _MOCKS[model] = _BUILTIN_MOCKS[model]()
        return _MOCKS[model]
    if model.startswith("mock/py:"):
        # mock/py:package.module:attr names a script importable in this process.
        module_name, _, attr = model.removeprefix("mock/py:").partition(":")
        try:
            target = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise PermanentProviderError(f"cannot load mock script {model!r}: {exc}") from None
        _MOCKS[model] = target if isinstance(target, MockModel) else MockModel(target)
        return _MOCKS[model]
    known = ", ".join(sorted(set(_MOCKS) | set(_BUILTIN_MOCKS)))
    raise PermanentProviderError(f"unknown mock model {model!r} (known: {known}, or mock/py:module:attr)")


def mock_problem(model: str) -> str | None:
    """Why the `mock/...` id `model` cannot answer (unknown, or its script does not import), or None.

    Checked when a variant loads, so a typo stops the run before any attempt is written.
    """
    if model in _MOCKS or model in _BUILTIN_MOCKS:
        return None
    if model.startswith("mock/py:"):
        module_name, _, attr = model.removeprefix("mock/py:").partition(":")
        if not module_name or not attr:
            return f"{model!r} should read mock/py:module:attr"
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:  # noqa: BLE001 - importing the script runs the user's code
            return f"cannot import the mock script's module {module_name!r}: {exc}"
        if not hasattr(module, attr):
            return f"module {module_name!r} has no {attr!r} for the mock script {model!r}"
        return None
    known = ", ".join(sorted(set(_MOCKS) | set(_BUILTIN_MOCKS)))
    return f"unknown mock model {model!r}; known: {known}, or mock/py:module:attr"


class MockProvider:
    """Scripted models, built in: no key, no import, no cost."""

    name = "mock"

    def serves(self, model: str, api_base: str | None) -> bool:
        """Every `mock/...` id."""
        return model.startswith("mock/")

    async def call(self, spec: RoleSpec, prompt: Prompt, cache_prefix: str | None = None) -> Completion:
        """The script's next reply, with honest token counts. A script reads a Chat as its
        messages' contents, a blank line between two."""
        assert spec.model is not None
        mock = _mock_for(spec.model)
        start = time.perf_counter()
        read = prompt if isinstance(prompt, str) else prompt.text()
        text = await mock.reply(read, spec.seed)
        input_tokens, output_tokens = count_tokens(read), count_tokens(text)
        return Completion(
            text=text, model=spec.model, input_tokens=input_tokens, cached_tokens=0,
            thinking_tokens=0, output_tokens=output_tokens, latency_s=time.perf_counter() - start)

    def model_problem(self, model: str, api_base: str | None) -> str | None:
        """An unknown mock, or a `mock/py:` script that does not import (mock_problem)."""
        return mock_problem(model)

    def classify(self, exc: BaseException) -> ProviderError:
        """A scripted exception as any provider's (seqk.models.retry.classify): a script raises
        the ProviderError it means, or an exception carrying an HTTP `status_code`."""
        return classify(exc)

    def credential_problem(self, role: RoleSpec) -> str | None:
        """None: a mock needs no key."""
        return None

    def ensure_ready(self, role: RoleSpec) -> None:
        """Nothing: an unknown mock is refused when the variant loads (model_problem, C03)."""

    def check_installed(self, role: RoleSpec) -> None:
        """Nothing: a mock is built in."""

    def import_client(self) -> None:
        """Nothing: a mock is built in."""

    def price(self, model: str) -> Price | None:
        """Free."""
        return FREE
