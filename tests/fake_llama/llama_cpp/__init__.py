"""A stand-in for llama-cpp-python that behaves like a native build on a CPU that lacks
its instructions: it loads, then dies of SIGSEGV on its first generation (as the AMX build
did at `ldtilecfg`). Put this folder first on PYTHONPATH of the worker process.

SEQK_FAKE_LLAMA_CRASH_AFTER=N lets N generations succeed first.
"""

import os
import signal

__version__ = "0.3.36-fake"

_done = 0


def llama_print_system_info() -> bytes:
    return b"CPU : SSE3 = 1 | AVX2 = 1 | AVX512 = 1 | AMX_INT8 = 1 | "


class Llama:
    def __init__(self, model_path: str, **_: object):
        self.model_path = model_path

    def reset(self) -> None:
        pass

    def create_chat_completion(self, messages: list, **params: object) -> dict:
        global _done
        if _done >= int(os.environ.get("SEQK_FAKE_LLAMA_CRASH_AFTER", "0")):
            os.kill(os.getpid(), signal.SIGSEGV)
        _done += 1
        return {"choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": "fine"}}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}
