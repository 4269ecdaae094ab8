"""Changing a variant's keys without editing its file: `seqk run v.yaml --set k=5 --set
actor.temperature=0.2 --set options.split=training`, a sweep's cells, `overrides=` in Python.

A key is dotted (`actor.temperature` sets one key of `actor:`, keeping the others); a key without
a dot replaces the whole value. A value is YAML (`0.2` is a number, `[1, 2]` a list, `null` unset,
`""` an empty string). The result is validated as if it were written in the file, and a problem an
override caused says which one.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import yaml

from seqk.errors import ConfigError, ConfigIssue


def parse_sets(items: Sequence[str], option: str = "--set") -> tuple[dict[str, Any], dict[str, str]]:
    """`KEY=VALUE` strings as overrides (dotted key -> YAML value), and each key's label for error
    messages (`--set KEY=VALUE`). ConfigError C01 names one that is not KEY=VALUE or whose value is
    not YAML."""
    overrides: dict[str, Any] = {}
    labels: dict[str, str] = {}
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        where = f"{option} {item}"
        if not sep or not key or any(not part for part in key.split(".")):
            raise ConfigError(option, [ConfigIssue(
                "C01", where, "expected KEY=VALUE (a key, dotted for a nested one; a YAML value)")])
        try:
            overrides[key] = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise ConfigError(option, [ConfigIssue("C01", where, f"the value is not valid YAML: {problem}")]) from None
        labels[key] = where
    return overrides, labels


def apply(data: Mapping[str, Any], overrides: Mapping[str, Any], source: str) -> dict[str, Any]:
    """`data` with every override set, in order (the input is not changed). ConfigError C03 when a
    dotted key goes through a value that is not a mapping."""
    out = copy.deepcopy(dict(data))
    for key, value in overrides.items():
        *parents, last = key.split(".")
        node = out
        for depth, part in enumerate(parents):
            child = node.setdefault(part, {})
            if child is None:
                child = node[part] = {}
            if not isinstance(child, dict):
                where = ".".join(parents[:depth + 1])
                raise ConfigError(source, [ConfigIssue("C03", where, f"is {child!r}, not a mapping, so "
                                                       f"{key} cannot be set")])
            node = child
        node[last] = copy.deepcopy(value)
    return out


def _caused_by(field: str, key: str) -> bool:
    return field == key or field.startswith((key + ".", key + "[")) or key.startswith(field + ".")


@contextlib.contextmanager
def attributed(labels: Mapping[str, str]) -> Iterator[None]:
    """Problems raised inside say which override caused them: `[C02] actr: unknown key (given by
    --set actr.temperature=0.2)`."""
    try:
        yield
    except ConfigError as exc:
        if not labels:
            raise
        issues = []
        for issue in exc.issues:
            causes = [label for key, label in labels.items() if _caused_by(issue.field, key)]
            message = issue.message + (f" (given by {', '.join(causes)})" if causes else "")
            issues.append(ConfigIssue(issue.rule, issue.field, message))
        raise ConfigError(exc.source, issues) from None
