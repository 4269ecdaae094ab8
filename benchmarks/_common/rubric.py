"""Rubric judging, written once for clbench, advancedif, healthbench and researchrubrics:
chat messages and their renderings, numbered rubric lists and weighted aggregation. Reading a
judge's JSON reply and per-criterion judge calls made at once are public verifiers helpers
(`seqk.verifiers.judge_json`, `judge_each`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

_WORDS = re.compile(r"\s+")


@dataclass(frozen=True)
class Message:
    """One chat turn: a lower-case role ('' when the data gives none) and its text."""

    role: str
    content: str


def content_text(value: Any, *, other: Literal["str", "json"] = "str") -> str:
    """A message's content as text: a string as is; None as ''; a list of blocks as the
    concatenation of its string blocks and of the `text` of its object blocks; anything
    else through str() or as JSON text."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, list) and other == "str":
        return "".join(b if isinstance(b, str) else str(b.get("text") or "")
                       for b in value if isinstance(b, str | dict))
    return str(value) if other == "str" else json.dumps(value, ensure_ascii=False)


def messages_of(raw: Any, *, other: Literal["str", "json"] = "str",
                default_role: str = "user") -> list[Message]:
    """The object entries of a message list, roles lower-cased (missing: `default_role`),
    contents coerced by `content_text`; other entries are left out."""
    if not isinstance(raw, list):
        return []
    return [Message(str(m.get("role") or default_role).strip().lower(),
                    content_text(m.get("content"), other=other))
            for m in raw if isinstance(m, dict)]


ChatStyle = Literal["indexed", "transcript", "labelled", "grader"]


def render_chat(messages: Sequence[Message], style: ChatStyle) -> str:
    """A conversation as text, messages separated by a blank line:

    indexed     `[00] system:`, a blank line, the stripped content (empty turns kept)
    transcript  `USER:`, a newline, the content
    labelled    `User: content` (`Assistant`, `System`, other roles title-cased, none `Message`)
    grader      `user: content` (no role: `message`)

    Every style but `indexed` leaves out turns with empty content.
    """
    if style == "indexed":
        return "\n\n".join(f"[{n:02d}] {m.role}:\n\n{m.content.strip()}"
                           for n, m in enumerate(messages))
    kept = [m for m in messages if m.content.strip()]
    if style == "transcript":
        return "\n\n".join(f"{m.role.upper()}:\n{m.content}" for m in kept)
    if style == "labelled":
        return "\n\n".join(f"{m.role.title() if m.role else 'Message'}: {m.content}" for m in kept)
    return "\n\n".join(f"{m.role or 'message'}: {m.content}" for m in kept)


def nonempty(items: Sequence[Any]) -> list[str]:
    """The items as stripped strings, empty ones removed, so numbering and counts agree."""
    return [text for text in (str(i).strip() for i in items if i is not None) if text]


def numbered(items: Sequence[str]) -> str:
    """`1. first`, `2. second`, ... one per line."""
    return "\n".join(f"{i}. {text}" for i, text in enumerate(items, start=1))


def words(text: str) -> str:
    """Lower-cased, whitespace collapsed: the form exact-match label rules compare."""
    return _WORDS.sub(" ", text.strip().lower())


@dataclass(frozen=True)
class Criterion:
    """One rubric item: its text, its signed weight (HealthBench points, ResearchRubrics
    weight), and the labels that come with it."""

    text: str
    weight: float = 1.0
    tags: tuple[str, ...] = ()
    axis: str = ""


@dataclass(frozen=True)
class Grade:
    """The judge's ruling on one criterion."""

    criterion: Criterion
    score: float
    """1.0 when met (satisfied), 0.0 when not."""
    reason: str = ""
    missing: tuple[str, ...] = ()

    @property
    def met(self) -> bool:
        """True when the judge found the criterion met."""
        return self.score >= 1.0


def weighted_score(grades: Sequence[Grade], *, clip: bool) -> float:
    """Σ(score × weight) over every criterion, negative ones included, divided by the sum of
    the positive weights (0.0 when there are none); clipped to [0, 1] when asked."""
    total = sum(g.criterion.weight for g in grades if g.criterion.weight > 0)
    if total <= 0:
        return 0.0
    value = sum(g.score * g.criterion.weight for g in grades) / total
    return min(1.0, max(0.0, value)) if clip else value


def shortest(number: float) -> str:
    """A number in its shortest form: 7, 2.5, -4."""
    return f"{number:g}"


def clip_words(text: str, limit: int) -> str:
    """At most `limit` characters, cut at a word boundary with an ellipsis when cut."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
    return cut.rstrip(" ,;:") + "…"

