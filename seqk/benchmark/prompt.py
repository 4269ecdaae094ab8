"""The actor's prompt: the bare task for pass@k; for seq@k, the task, a framing ("This is
attempt t of K." by default) and the earlier attempts with their feedback, as a retry protocol
says (a variant's `prompt:` block; RetryProtocol).

The default protocol is the seed's, word for word; changing the wording changes results, so it
is versioned (PROMPT_VERSION is part of every run's fingerprint), and a variant's own protocol
joins the run's identity.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from seqk.benchmark.contract import HistoryItem
from seqk.records import Chat, Message, Prompt

PROMPT_VERSION = "seq_k-v1"

FIRST_NOTE = (
    "If this attempt does not pass, you will receive feedback and can revise it "
    "on the remaining attempts."
)
RETRY_NOTE = "Review your previous attempt(s) and the feedback below, then provide an improved answer."

FRAMING_FIRST = "This is attempt {t} of {k}. " + FIRST_NOTE
"""The seed's framing of an attempt that shows no earlier attempt (attempt 1)."""
FRAMING_LATER = "This is attempt {t} of {k}. " + RETRY_NOTE
"""The seed's framing of an attempt that shows earlier ones."""
FRAMING_BLIND = "This is attempt {t} of {k}."
"""The framing of every attempt under feedback_mode `none`, which shows no earlier attempt and
promises no feedback."""
ATTEMPT = "<PreviousAttempt {i}>\n{output}\n</PreviousAttempt {i}>"
FEEDBACK = "<Feedback {i}>\n{feedback}\n</Feedback {i}>"

PLACEHOLDERS: dict[str, tuple[str, ...]] = {
    "framing_first": ("t", "k"), "framing_later": ("t", "k"),
    "attempt": ("i", "output", "feedback"), "feedback": ("i", "output", "feedback"),
}
"""The placeholders each template may hold."""
_SAMPLE = {"t": 2, "k": 3, "i": 1, "output": "output", "feedback": "feedback"}


def template_problem(template: str, field: str) -> str | None:
    """What is wrong with `template` as the protocol's `field` (an unknown placeholder, a lone
    brace, a format that fails), in words, or None."""
    allowed = PLACEHOLDERS[field]
    try:
        names = [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]
    except ValueError as exc:
        return f"{exc} (write a literal brace as {{{{ or }}}})"
    for name in names:
        if name not in allowed:
            shown = "{" + name + "}"
            return f"unknown placeholder {shown}; {field} may hold {', '.join('{' + a + '}' for a in allowed)}"
    try:
        template.format(**_SAMPLE)
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        return f"cannot be filled in: {exc}"
    return None


@dataclass(frozen=True)
class Rendered:
    """One attempt's prompt and, for a str prompt, its start that the next call repeats (the
    providers' prompt cache; a Chat carries its own `cache_at`)."""

    prompt: Prompt
    cache_prefix: str | None


@dataclass(frozen=True)
class RetryProtocol:
    """How a seq@k attempt shows its task, its place among the K and the earlier attempts."""

    system: str | None = None
    """A system message before the task (then the prompt is a Chat)."""
    framing_first: str = FRAMING_FIRST
    """After the task, in an attempt that shows no earlier attempt; {t} and {k}; "" for none."""
    framing_later: str = FRAMING_LATER
    """After the task, in an attempt that shows earlier ones; {t} and {k}."""
    attempt: str = ATTEMPT
    """One earlier attempt, inline: {i} (its place), {output}, {feedback}."""
    feedback: str = FEEDBACK
    """Its feedback (left out when empty): {i}, {output}, {feedback}."""
    history: Literal["inline", "messages"] = "inline"
    """inline: one user message; messages: earlier outputs as assistant turns, each later
    attempt's framing and the feedback as a user turn."""
    shows_history: bool = True
    """False under feedback_mode `none`: every attempt shows the task and its framing only."""

    @property
    def chat(self) -> bool:
        """True when its prompts are Chats (a system message, or history as messages)."""
        return self.system is not None or (self.history == "messages" and self.shows_history)

    def render(self, task_prompt: str, attempt_index: int, k: int, *, seq: bool,
               history: Sequence[HistoryItem] = ()) -> Rendered:
        """The prompt of attempt `attempt_index` (1-based) of `k`. pass@k: the bare task."""
        if not seq:
            return Rendered(task_prompt, task_prompt)
        shown = list(history) if self.shows_history else []
        if self.history == "messages" and shown:
            return Rendered(self._messages(task_prompt, attempt_index, k, shown), None)
        framing = (self.framing_later if shown else self.framing_first).format(t=attempt_index, k=k)
        parts = [task_prompt, framing]
        for i, item in enumerate(shown, start=1):
            values = {"i": i, "output": item.output, "feedback": item.feedback or ""}
            parts.append(self.attempt.format(**values))
            if item.feedback:
                parts.append(self.feedback.format(**values))
        text = "\n\n".join([task_prompt] + [part for part in parts[1:] if part])
        if self.system is None:
            return Rendered(text, task_prompt)
        return Rendered(Chat((Message("system", self.system), Message("user", text)),
                             cache_at=(1, len(task_prompt))), None)

    def _messages(self, task_prompt: str, attempt_index: int, k: int, shown: list[HistoryItem]) -> Chat:
        """The conversation of attempt `attempt_index`: each earlier attempt's user turn as it was
        sent, its output as the assistant's turn, then the next framing and the feedback."""
        framing = self.framing_first.format(t=1, k=k)
        first = f"{task_prompt}\n\n{framing}" if framing else task_prompt
        messages = [Message("system", self.system)] if self.system is not None else []
        messages.append(Message("user", first))
        for i, item in enumerate(shown, start=1):
            messages.append(Message("assistant", item.output))
            values = {"i": i, "output": item.output, "feedback": item.feedback or ""}
            later = self.framing_later.format(t=i + 1, k=k)
            turn = [later, self.feedback.format(**values) if item.feedback else ""]
            messages.append(Message("user", "\n\n".join(p for p in turn if p)))
        # The next attempt repeats this whole conversation and adds two turns.
        return Chat(tuple(messages), cache_at=(len(messages) - 1, len(messages[-1].content)))

    def context(self, attempt_index: int, k: int, history: Sequence[HistoryItem] = ()) -> str:
        """What follows the task in the inline prompt of attempt `attempt_index` (its framing, the
        earlier attempts and their feedback): what an agent harness adds to its task's own
        instruction."""
        inline = replace(self, system=None, history="inline")
        prompt = inline.render("", attempt_index, k, seq=True, history=history).prompt
        assert isinstance(prompt, str)
        return prompt.removeprefix("\n\n")

    def used(self) -> list[str]:
        """The settings its prompts depend on: under `none` no earlier attempt is shown, and as
        messages an earlier output is its own turn (no `attempt` template)."""
        used = ["system", "framing_first"]
        if self.shows_history:
            used += ["framing_later", "feedback", "history"] + (["attempt"] if self.history == "inline" else [])
        return used

    def identity(self) -> dict[str, str]:
        """The settings in which it differs from the default protocol of its feedback mode, among
        those it uses: empty for the default, so runs made before protocols keep their run id."""
        base = default_protocol(self.shows_history)
        return {name: getattr(self, name) for name in self.used() if getattr(self, name) != getattr(base, name)}


DEFAULT = RetryProtocol()
"""The seed's protocol."""


def default_protocol(shows_history: bool = True) -> RetryProtocol:
    """The default protocol of a feedback mode: the seed's; under `none` (no history shown), every
    attempt framed "This is attempt t of K." and nothing else."""
    if shows_history:
        return DEFAULT
    return replace(DEFAULT, framing_first=FRAMING_BLIND, framing_later=FRAMING_BLIND, shows_history=False)


def actor_prompt(task_prompt: str, attempt_index: int, k: int, *, seq: bool,
                 history: Sequence[HistoryItem] = ()) -> str:
    """The exact text the actor sees on attempt `attempt_index` (1-based) of `k` under the seed's
    protocol."""
    prompt = DEFAULT.render(task_prompt, attempt_index, k, seq=seq, history=history).prompt
    assert isinstance(prompt, str)
    return prompt
