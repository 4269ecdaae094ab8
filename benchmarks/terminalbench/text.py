"""Texts of terminalbench: redaction, failure signals, the three feedback templates and the
instruction a retrying agent reads.

Redaction matches whole tokens only: a key pattern must start at a token boundary, so
`error-handling-module` or `task-1234567890` survive (seq_k's unanchored patterns turned
them into `err[redacted_secret]…`), and the `or-` pattern is gone (OpenRouter keys start
with `sk-or-`, which `sk-` covers). The values of the variables handed to Harbor are
redacted wherever they appear, whatever their shape.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

REDACTED = "[redacted_secret]"
_SECRET = re.compile(
    r"(?<![A-Za-z0-9_-])(?:sk-[A-Za-z0-9_-]{8,}|ghp_[A-Za-z0-9_]{8,}|github_pat_[A-Za-z0-9_]{8,}"
    r"|hf_[A-Za-z0-9_]{8,}|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16})(?![A-Za-z0-9_-])"
)
_MIN_SECRET_VALUE = 8
"""Shorter variable values are not redacted verbatim: they would match ordinary words."""

SIGNAL_WORDS = ("traceback", "error:", "exception", "command not found", "no such file or directory",
                "segmentation fault", "assertionerror", "failed", "failure", "permission denied",
                "timed out")
FEEDBACK_CHAR_LIMIT = 8000
"""Characters of verifier output a feedback carries (its end, where pytest's summary is):
full logs of every earlier attempt would outgrow an agent's context."""
NONE_CAPTURED = "(none captured)"
HEADER = ("Additional context from earlier attempts at this task (seq@k). If anything below "
          "conflicts with the task instruction above, the instruction wins.")
BINARY = ("The previous attempt did not pass the task's tests. Use what you observe in the "
          "terminal to do better this time.")
RETRY_FOCUS = (
    "- Re-check task-specific paths, file names, service state and output format.",
    "- Run a concrete command that verifies the result before you stop.",
    "- Trust what the terminal shows over your own impression of success.",
)


def redact(text: str, env_names: Iterable[str] = ()) -> str:
    """`text` with key-shaped tokens and the values of `env_names` replaced by REDACTED."""
    for name in env_names:
        value = os.environ.get(name, "")
        if len(value) >= _MIN_SECRET_VALUE:
            text = text.replace(value, REDACTED)
    return _SECRET.sub(REDACTED, text)


def error_signals(*texts: str) -> list[str]:
    """Unique stripped lines of `texts`, in order, that name a failure."""
    found: list[str] = []
    for text in texts:
        for line in text.splitlines():
            line = line.strip()
            if line and line not in found and any(w in line.lower() for w in SIGNAL_WORDS):
                found.append(line)
    return found


def tail(text: str, limit: int = FEEDBACK_CHAR_LIMIT) -> str:
    """The end of `text`, marked when cut."""
    if len(text) <= limit:
        return text
    return "[...cut...]\n" + text[-limit:]


def retry_diagnostics(details: dict[str, Any], raw_eval_output: str) -> str:
    """The retry_diagnostics feedback: verifier status, terminal state, signals, a checklist."""
    signals = details.get("error_signals") or []
    signal_lines = [f"- {s}" for s in signals] or [
        "- no runtime error was captured; the end state likely differs from what the tests expect"]
    return "\n".join([
        f"task={details.get('task_id', '')}",
        "",
        "verifier_status:",
        tail(raw_eval_output) or "reward=0.0",
        "",
        "observed_terminal_state:",
        f"last_command: {details.get('last_command') or NONE_CAPTURED}",
        "last_output:",
        tail(details.get("last_output") or "") or NONE_CAPTURED,
        "",
        "public_failure_signals:",
        *signal_lines,
        "",
        "retry_focus:",
        *RETRY_FOCUS,
    ])


def with_context(instruction: str, context: str) -> str:
    """The task instruction followed by the seq@k context, as the agent reads it."""
    return f"{instruction.rstrip()}\n\n{HEADER}\n\n{context}\n"
