"""Pull JSON out of an LLM reply, repairing the damage replies usually carry.

A reply is prose with JSON somewhere in it: inside a code fence or not, with trailing
commas, single quotes, Python literals (True/False/None), missing commas (numpy-style
`[[0 1] [1 0]]`), or cut off before its closing brackets. `extract_json` returns the
last JSON array or object of the reply, since a model that reasons before answering
states its final answer last; `extract_all_json` returns every one, in order.

Only arrays and objects count: a bare number or quoted word in prose is not an answer.

Every pass is linear in the reply's length (replies reach 50 KB): a single bracket
scan finds the candidates, and a failed candidate is searched for nested values at
most `_MAX_DESCENT` levels deep rather than rescanned from every bracket.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

_FENCE = "```"
_MAX_DESCENT = 3
"""How many levels below a failed candidate to look for values (prose like
`[answer: [[1, 2]]]` needs one; deeper garbage is not worth the parse time)."""

_OPENERS = {"[": "]", "{": "}"}
_STRUCTURE = re.compile(r"[\[\]{}\"']")
# Alternatives are disjoint (only the escapes take a backslash), so matching never backtracks.
# A string must close on its own line: an unmatched quote is prose (an apostrophe, 5" wide).
_STRING_REST = {
    '"': re.compile(r'(?:[^"\\\n]|\\.)*"'),
    "'": re.compile(r"(?:[^'\\\n]|\\.)*'"),
}
_TOKEN = re.compile(
    r"""\s+
      | (?P<dq>"(?:[^"\\]|\\.|\\\Z)*"?)
      | (?P<sq>'(?:[^'\\\n]|\\.|\\\Z)*'?)
      | (?P<punct>[\[\]{}:,])
      | (?P<word>[^\s\[\]{}:,"']+)
    """,
    re.VERBOSE | re.DOTALL,
)
_COMPLETE = {
    "dq": re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL),
    "sq": re.compile(r"'(?:[^'\\\n]|\\.)*'"),
}
_QUOTE_OR_ESCAPE = re.compile(r"\\.|\\\Z|\"", re.DOTALL)
_JSON_ESCAPES = frozenset('"\\/bfnrtu')
_DECODER = json.JSONDecoder()
_UNPARSED = object()
_PYTHON_WORDS = {"True": "true", "False": "false", "None": "null"}
_VALUE_END = frozenset("]}")
_NO_COMMA_AFTER = frozenset("[{:,")


def extract_json(text: str, accept: Callable[[Any], bool] | None = None) -> Any:
    """The last JSON array or object in `text` (the last one `accept` approves, if given).

    Raises ValueError when the text holds no parseable (or no accepted) value.
    """
    values = extract_all_json(text)
    for value in reversed(values):
        if accept is None or accept(value):
            return value
    if not values:
        raise ValueError(f"no JSON array or object found in a reply of {len(text)} characters")
    raise ValueError(f"none of the {len(values)} JSON value(s) in the reply has the expected form")


def extract_all_json(text: str) -> list[Any]:
    """Every JSON array or object in `text`, repaired, in order of appearance.

    Code fence markers are hard boundaries: a value left unclosed inside a fence is
    closed at the fence's end instead of swallowing the prose that follows it.
    """
    values: list[Any] = []
    for segment in text.split(_FENCE):
        values.extend(_values(segment, _scan(segment), 0))
    return values


def parse_lenient(fragment: str) -> Any:
    """Parse one JSON value, repairing quotes, literals, commas and missing closers.

    Text after the first complete value is ignored. Raises ValueError if even the
    repaired text is not JSON.
    """
    # json raises RecursionError, not ValueError, on pathologically deep nesting.
    try:
        return json.loads(fragment, strict=False)
    except (ValueError, RecursionError):
        pass
    try:
        return json.loads(_repair(fragment), strict=False)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"not JSON even after repair: {exc}") from None


@dataclass
class _Span:
    """A bracketed stretch of text that may hold a JSON value."""

    start: int
    end: int
    children: list[_Span] = field(default_factory=list)
    value: Any = _UNPARSED


@dataclass
class _Frame:
    """An open bracket during the scan, with the spans already closed inside it."""

    closer: str
    start: int
    children: list[_Span] = field(default_factory=list)


def _scan(text: str) -> list[_Span]:
    """The outermost bracketed spans of `text`, each with its nested spans.

    An unclosed span at the end (truncated output) runs to the end of the text. A span
    broken by a mismatched closer is dropped, but the spans already closed inside it are
    kept, so nothing is scanned twice.

    An outermost span that is valid JSON is decoded on the spot. Still linear: a failed
    decode stops at or before the point where the scan closes or drops that span.
    """
    spans: list[_Span] = []
    stack: list[_Frame] = []
    # Up to here a quote of this kind has no partner on its line: ignoring the quotes in
    # that stretch (instead of retrying each) keeps a line full of apostrophes linear.
    prose_until = {'"': -1, "'": -1}
    pos = 0
    while match := _STRUCTURE.search(text, pos):
        char, pos = match.group(), match.end()
        if char in _OPENERS:
            if not stack:
                # Most candidates are valid JSON: decode them at C speed and skip past them.
                try:
                    value, end = _DECODER.raw_decode(text, match.start())
                except (ValueError, RecursionError):
                    pass
                else:
                    spans.append(_Span(match.start(), end, value=value))
                    pos = end
                    continue
            stack.append(_Frame(_OPENERS[char], match.start()))
        elif not stack or (char in prose_until and pos <= prose_until[char]):
            continue
        elif char in prose_until:
            rest = _STRING_REST[char].match(text, pos)
            if rest is not None:
                pos = rest.end()
            else:
                newline = text.find("\n", pos)
                prose_until[char] = len(text) if newline < 0 else newline
        elif char != stack[-1].closer:
            for frame in stack:
                spans.extend(frame.children)
            stack.clear()
        else:
            frame = stack.pop()
            span = _Span(frame.start, pos, frame.children)
            (stack[-1].children if stack else spans).append(span)
    if stack:
        nested = [child for frame in stack for child in frame.children]
        spans.append(_Span(stack[0].start, len(text), nested))
    return spans


def _values(text: str, spans: list[_Span], depth: int) -> Iterator[Any]:
    """The values of `spans`, looking inside the ones that do not parse."""
    for span in spans:
        if span.value is not _UNPARSED:
            yield span.value
            continue
        try:
            yield parse_lenient(text[span.start:span.end])
        except ValueError:
            if depth < _MAX_DESCENT:
                yield from _values(text, span.children, depth + 1)


def _repair(fragment: str) -> str:
    """Rewrite a damaged JSON fragment token by token into (hopefully) valid JSON."""
    out: list[str] = []
    closers: list[str] = []
    for match in _TOKEN.finditer(fragment):
        kind = match.lastgroup
        if kind is None:
            continue  # whitespace
        token = match.group()
        if kind == "punct":
            if token in _OPENERS:
                _comma_between_values(out)
                closers.append(_OPENERS[token])
                out.append(token)
            elif token in _VALUE_END:
                _drop_trailing_comma(out)
                out.append(token)
                if closers:
                    closers.pop()
                if not closers:
                    break  # the first complete value ends here
            else:
                out.append(token)
            continue
        _comma_between_values(out)
        if kind == "word":
            out.append(_PYTHON_WORDS.get(token, token))
        else:
            complete = _COMPLETE[kind].fullmatch(token) is not None
            out.append(_requote(token[1:-1] if complete else token[1:]))
    _close_truncated(out, closers)
    return "".join(out)


def _requote(body: str) -> str:
    """`body`, the inside of a string in any quotes, as a valid double-quoted JSON string."""

    def fix(match: re.Match[str]) -> str:
        found = match.group()
        if found == '"':
            return '\\"'
        if found == "\\":
            return ""  # cut off mid-escape
        if found[1] in _JSON_ESCAPES:
            return found
        # \' is Python's escape; any other (LaTeX's \alpha) meant a literal backslash.
        return "'" if found[1] == "'" else "\\" + found

    return '"' + _QUOTE_OR_ESCAPE.sub(fix, body) + '"'


def _comma_between_values(out: list[str]) -> None:
    # Two values side by side lost the comma between them (numpy prints `[0 1]`).
    if out and out[-1] not in _NO_COMMA_AFTER:
        out.append(",")


def _drop_trailing_comma(out: list[str]) -> None:
    while out and out[-1] == ",":
        out.pop()


def _close_truncated(out: list[str], closers: list[str]) -> None:
    """Close what a cut-off reply left open, dropping a dangling key or separator."""
    while closers:
        _drop_trailing_comma(out)
        if closers[-1] == "}":
            if out and out[-1] == ":":
                out.pop()  # the key lost its value; the key goes too
                out.pop()
            elif out and out[-1].startswith('"') and len(out) > 1 and out[-2] in ("{", ","):
                out.pop()  # a key with neither colon nor value
            _drop_trailing_comma(out)
        out.append(closers.pop())
