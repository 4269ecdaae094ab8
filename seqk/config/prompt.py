"""A variant's `prompt:` block: the seq@k retry protocol as an experimental factor, checked when
the variant loads and resolved into the RetryProtocol the engine renders (seqk.benchmark.prompt).

Every key is optional; the seed's protocol is the default, so a variant without the block (or
with one that repeats the default) keeps its run id. A protocol that differs joins the run's
identity: its fingerprint, and a `+prompt-<hash>` on the run id's feedback slot.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from seqk.benchmark import AgenticBenchmark, Benchmark, FeedbackMode
from seqk.benchmark.prompt import RetryProtocol, default_protocol, template_problem
from seqk.config.identity import canonical_json
from seqk.errors import ConfigIssue

TEMPLATES = ("framing_first", "framing_later", "attempt", "feedback")


class PromptParams(BaseModel):
    """The seq@k retry protocol; unset keys keep the seed's (docs/treatment.md)."""

    model_config = ConfigDict(extra="forbid")

    system: str | None = None
    """A system message before the task (the prompt is then a list of messages); unset or "": none."""
    framing_first: str | None = None
    """The framing after the task in an attempt that shows no earlier one (attempt 1; every
    attempt under feedback_mode none), with {t} and {k}; "" for none. Default: the seed's "This is
    attempt {t} of {k}. If this attempt does not pass, ..." ("This is attempt {t} of {k}." under none)."""
    framing_later: str | None = None
    """The framing after the task in an attempt that shows earlier ones, with {t} and {k}. Default:
    the seed's "This is attempt {t} of {k}. Review your previous attempt(s) and the feedback below, ...\""""
    attempt: str | None = None
    """One earlier attempt in an inline history, with {i}, {output}, {feedback}. Default:
    "<PreviousAttempt {i}>\\n{output}\\n</PreviousAttempt {i}>"."""
    feedback: str | None = None
    """Its feedback (left out when the feedback is empty), with {i}, {output}, {feedback}. Default:
    "<Feedback {i}>\\n{feedback}\\n</Feedback {i}>"."""
    history: Literal["inline", "messages"] = "inline"
    """inline: one user message, the earlier attempts after the framing (the seed's); messages: each
    earlier output an assistant turn, and the next attempt's framing with the feedback a user turn."""


def resolve_protocol(params: PromptParams, mode: FeedbackMode, bench: Benchmark[Any],
                     seq: bool) -> tuple[RetryProtocol, list[ConfigIssue], list[str]]:
    """The run's protocol, the problems with the block (C13: a template; C03: what the benchmark
    cannot deliver) and notes on the keys this run does not use. pass@k sends the bare task: its
    protocol is the default, whatever the block says."""
    issues: list[ConfigIssue] = []
    for name in TEMPLATES:
        template = getattr(params, name)
        problem = template_problem(template, name) if template is not None else None
        if problem:
            issues.append(ConfigIssue("C13", f"prompt.{name}", problem))
    base = default_protocol(mode.shows_history)
    protocol = replace(base, system=params.system or None, history=params.history,
                       **{name: getattr(params, name) for name in TEMPLATES if getattr(params, name) is not None})
    written = params.model_dump(exclude_unset=True)
    if not seq:
        unused = f"prompt is not used: pass@k sends the bare task ({', '.join(sorted(written))} set)"
        return base, issues, [unused] if written else []
    if protocol.history == "messages" and protocol.shows_history and not protocol.framing_later:
        issues.append(ConfigIssue("C13", "prompt.framing_later", "history: messages starts each later "
                                  "attempt with a user turn that holds its framing: it cannot be empty"))
    if isinstance(bench, AgenticBenchmark) and (protocol.system is not None or protocol.history == "messages"):
        issues.append(ConfigIssue("C03", "prompt.history" if protocol.history == "messages" else "prompt.system",
                                  f"{bench.name} runs its own agent harness, which takes one instruction: "
                                  "no system message and no history as messages"))
    used = protocol.used()
    notes = [f"prompt.{name} is not used: " + (
        f"feedback_mode {mode.name} shows no earlier attempt" if not protocol.shows_history
        else "with history: messages each earlier output is an assistant turn as it was")
        for name in written if name not in used]
    return protocol, issues, notes


def protocol_slot(protocol: RetryProtocol) -> str | None:
    """What the run id's feedback slot adds for a protocol other than the default: `prompt-<8 hex>`
    of its identity; None for the default."""
    identity = protocol.identity()
    if not identity:
        return None
    return "prompt-" + hashlib.sha256(canonical_json(identity).encode()).hexdigest()[:8]


def protocol_config(protocol: RetryProtocol) -> dict[str, Any]:
    """The protocol as the run's stored config holds it (absent for the default): every setting,
    what differs from the default, and whether its prompts are chats (a JSON array of messages in
    the attempts table)."""
    identity = protocol.identity()
    if not identity:
        return {}
    settings = {k: v for k, v in asdict(protocol).items() if k != "shows_history"}
    return {"prompt": settings | {"differs": sorted(identity), "chat": protocol.chat}}
