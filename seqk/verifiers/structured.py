"""A field of the JSON object a reply gives, against the target.

    json_field  the last JSON object in the reply that has `field` (a dotted path: "answer",
                "result.value", "items.0"); its value equals a target: text ignoring case and
                runs of whitespace, a number as a number, true/false/null and lists as JSON
"""

from __future__ import annotations

import json
from typing import Any

from seqk.benchmark import Verdict
from seqk.verifiers.base import Target, targets_of, verdict
from seqk.verifiers.jsonextract import extract_all_json

_MISSING = object()


def _lookup(value: Any, path: list[str]) -> Any:
    for step in path:
        if isinstance(value, dict) and step in value:
            value = value[step]
        elif isinstance(value, list) and step.isdigit() and int(step) < len(value):
            value = value[int(step)]
        else:
            return _MISSING
    return value


def _same(value: Any, target: str) -> bool:
    if isinstance(value, str):
        return " ".join(value.split()).casefold() == " ".join(target.split()).casefold()
    if isinstance(value, bool) or value is None:
        return target.strip().casefold() == json.dumps(value)
    if isinstance(value, int | float):
        try:
            return float(value) == float(target)
        except ValueError:
            return False
    try:
        return bool(json.loads(target) == value)
    except ValueError:
        return False


def json_field(output: str, target: Target, *, field: str) -> Verdict:
    """Success when the value at `field` of the reply's last JSON object that has it equals a
    target. A reply without such an object is a wrong answer naming the format problem."""
    path = field.split(".")
    values = extract_all_json(output)
    found = next((got for value in reversed(values) if (got := _lookup(value, path)) is not _MISSING), _MISSING)
    shown = " or ".join(repr(t) for t in targets_of(target))
    if found is _MISSING:
        problem = (f"no field {field!r} in the reply's JSON" if any(isinstance(v, dict) for v in values)
                   else "no JSON object in the reply")
        return verdict(False, f"expected {shown} at {field!r}; {problem}", answer=None, format=problem)
    ok = any(_same(found, t) for t in targets_of(target))
    text = json.dumps(found, ensure_ascii=False)
    return verdict(ok, f"expected {shown} at {field!r}; the reply's value is {text[:200]}", answer=found)
