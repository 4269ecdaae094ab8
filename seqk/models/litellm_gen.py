"""Writes seqk/models/litellm_table.py from the installed litellm: the provider prefixes it routes
(`provider/model`), and for each the environment variables its `validate_environment` accepts.
With the table, a variant's model ids and keys are checked in milliseconds, without importing
litellm (~4 s). After upgrading litellm:

    python -m seqk.models.litellm_gen

tests/models/test_litellm_table.py fails while the shipped table differs from what this writes.

How the keys are found, without reading litellm's branches by hand: for each provider, the
variables named in `validate_environment`'s source that change its answer for `provider/<model>`
(alone, or in place of one of the variables it reports missing) are the relevant ones; every
subset of them is tried, and the smallest subsets it accepts are the provider's alternatives
(Azure needs three variables at once; Gemini either of two). Model ids litellm sends elsewhere
than their prefix says (`azure/command-r-plus` goes to OpenAI's keys) are listed apart, so that
seqk asks litellm itself about them.
"""

from __future__ import annotations

import inspect
import itertools
import os
import re
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

from seqk.models.litellm_provider import import_litellm

PROBE = "seqk-probe-model"
"""A model name no provider knows: litellm then answers for the prefix alone."""

Answer = tuple[bool, tuple[str, ...]]


def provider_prefixes(litellm: Any) -> list[str]:
    """Every prefix litellm routes: its provider enum and its JSON-configured OpenAI-compatible ones."""
    from litellm.llms.openai_like.json_loader import JSONProviderRegistry

    JSONProviderRegistry.load()
    names = {getattr(p, "value", p) for p in litellm.provider_list} | set(JSONProviderRegistry._providers)
    return sorted(str(n) for n in names)


def _answer(litellm: Any, model: str, env: Iterable[str]) -> Answer:
    """validate_environment(model) with exactly `env` set, each to a dummy value (inside `_bare`,
    which has emptied the environment, so only the names that differ are set or unset)."""
    wanted = set(env)
    for name in set(os.environ) - wanted:
        del os.environ[name]
    for name in wanted - set(os.environ):
        os.environ[name] = "x"
    found = litellm.validate_environment(model)
    return bool(found.get("keys_in_environment")), tuple(found.get("missing_keys") or ())


@contextmanager
def _bare() -> Iterator[None]:
    """An empty environment and no network: a provider whose routing starts a login (an OAuth
    device flow) fails at once, as it does offline, instead of waiting on a person."""
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError("seqk.models.litellm_gen probes offline")

    with mock.patch.dict(os.environ, clear=True), mock.patch("socket.create_connection", refuse), \
            mock.patch("socket.getaddrinfo", refuse), mock.patch("socket.socket.connect", refuse):
        yield


def _candidates(litellm: Any, prefixes: list[str]) -> list[str]:
    source = inspect.getsource(litellm.validate_environment)
    named = set(re.findall(r"\"([A-Z][A-Z0-9_]{2,})\"", source))
    named |= {f"{p.upper()}_API_KEY" for p in prefixes}  # f"{provider.upper()}_API_KEY" branches
    return sorted(named)


def _satisfied(answer: Answer) -> bool:
    """What seqk reads from litellm's answer: no key problem (credential_problem)."""
    ok, missing = answer
    return ok or not missing


Keys = tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]
"""(the variables reported missing with none set, the smallest sets of variables accepted)."""


def provider_keys(litellm: Any, prefix: str, candidates: list[str]) -> Keys | None:
    """(what litellm reports missing with nothing set, the smallest sets of variables it accepts),
    or None when the provider needs no variable."""
    model = f"{prefix}/{PROBE}"
    empty = _answer(litellm, model, ())
    if _satisfied(empty):
        return None
    missing = empty[1]
    relevant = set(missing)
    for name in candidates:
        if _answer(litellm, model, [name]) != empty:
            relevant.add(name)
        for dropped in missing:
            rest = [m for m in missing if m != dropped]
            if _answer(litellm, model, [*rest, name]) != _answer(litellm, model, rest):
                relevant.add(name)
    ordered = sorted(relevant)
    if len(ordered) > 12:
        raise RuntimeError(f"{prefix}: {len(ordered)} relevant variables, too many to try every subset")
    accepted: list[tuple[str, ...]] = []
    for size in range(1, len(ordered) + 1):
        for subset in itertools.combinations(ordered, size):
            if any(set(a) <= set(subset) for a in accepted):
                continue
            if _satisfied(_answer(litellm, model, subset)):
                accepted.append(subset)
    return missing, tuple(accepted)


def known_model_ids(litellm: Any, prefixes: list[str]) -> list[str]:
    """Every `provider/model` id litellm's price map names (prefixed where the map's key is not)."""
    ids = set()
    for key, entry in litellm.model_cost.items():
        provider = str(entry.get("litellm_provider") or "")
        head = key.split("/", 1)[0]
        if "/" in key and head in prefixes:
            ids.add(key)
        elif provider in prefixes:
            ids.add(f"{provider}/{key}")
    return sorted(ids)


def rerouted(litellm: Any, prefixes: list[str], keys: dict[str, Any]) -> list[str]:
    """Model ids of a provider that needs keys whose key check differs from their prefix's
    (litellm routes them elsewhere). A provider that needs none is not searched: were one of its
    models routed to a provider that does, the run's first call would fail as an AuthError and
    stop the run, as it did before this table existed."""
    expected = {(prefix, env): _answer(litellm, f"{prefix}/{PROBE}", env)
                for prefix, (_, alternatives) in keys.items() for env in [(), *alternatives]}
    found = []
    for model in known_model_ids(litellm, prefixes):
        prefix = model.split("/", 1)[0]
        if prefix in keys and any(_answer(litellm, model, env) != expected[prefix, env]
                                  for env in [(), *keys[prefix][1]]):
            found.append(model)
    return found


def table_source() -> str:
    """The text of seqk/models/litellm_table.py for the installed litellm."""
    litellm = import_litellm()
    import logging

    logging.getLogger("LiteLLM").setLevel(logging.CRITICAL)  # a few providers log their own probing
    prefixes = provider_prefixes(litellm)
    candidates = _candidates(litellm, prefixes)
    with _bare():
        keys = {p: found for p in prefixes if (found := provider_keys(litellm, p, candidates)) is not None}
        moved = rerouted(litellm, prefixes, keys)
    version = _version()
    shared = _shared_alternatives(keys)
    lines = [
        f'"""Generated by `python -m seqk.models.litellm_gen` from litellm {version}: do not edit.',
        "",
        "PREFIXES: the providers litellm routes as `provider/model`. KEYS: for each provider that",
        "needs one, (the variables litellm reports missing when none is set, the smallest sets of",
        "variables it accepts). REROUTED: model ids litellm checks against another provider's keys",
        '(seqk asks litellm itself about those)."""',
        "",
        f"LITELLM_VERSION = {version!r}",
        "",
        "PREFIXES: frozenset[str] = frozenset({",
        *_wrapped([repr(p) for p in prefixes]),
        "})",
        "",
        *(line for name, alternatives in shared.items() for line in _shared(name, alternatives)),
        "KEYS: dict[str, tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]] = {",
        *(line for p, entry in sorted(keys.items()) for line in _entry(p, *entry, shared)),
        "}",
        "",
        "REROUTED: frozenset[str] = frozenset({",
        *_wrapped([repr(m) for m in moved]),
        "})",
        "",
    ]
    return "\n".join(lines)


def _entry(prefix: str, missing: tuple[str, ...], alternatives: tuple[tuple[str, ...], ...],
           shared: dict[str, tuple[tuple[str, ...], ...]]) -> list[str]:
    """One KEYS item, on one line when it fits in 120 columns (naming its alternatives when
    several providers share them), else one alternative a line."""
    named = next((name for name, value in shared.items() if value == alternatives), None)
    line = f"    {prefix!r}: ({missing!r}, {named or repr(alternatives)}),"
    if len(line) <= 120:
        return [line]
    return [f"    {prefix!r}: (", f"        {missing!r},", "        (",
            *(f"            {a!r}," for a in alternatives), "        ),", "    ),"]


def _shared_alternatives(keys: dict[str, Any]) -> dict[str, tuple[tuple[str, ...], ...]]:
    """The alternatives too long for one line that more than one provider accepts, by name
    (written once, before KEYS)."""
    seen: dict[tuple[tuple[str, ...], ...], int] = {}
    for prefix, (missing, alternatives) in sorted(keys.items()):
        if len(f"    {prefix!r}: ({missing!r}, {alternatives!r}),") > 120:
            seen[alternatives] = seen.get(alternatives, 0) + 1
    return {f"_ALTERNATIVES_{i}": value for i, value in enumerate((v for v, n in seen.items() if n > 1), start=1)}


def _shared(name: str, alternatives: tuple[tuple[str, ...], ...]) -> list[str]:
    return [f"{name} = (", *(f"    {a!r}," for a in alternatives), ")", ""]


def _wrapped(items: list[str], width: int = 100) -> list[str]:
    lines, line = [], "   "
    for item in items:
        if len(line) + len(item) + 2 > width:
            lines.append(line)
            line = "   "
        line += f" {item},"
    return lines + ([line] if line.strip() else [])


def _version() -> str:
    from importlib.metadata import version

    return version("litellm")


def main() -> None:
    """Write the table beside this module."""
    from pathlib import Path

    target = Path(__file__).with_name("litellm_table.py")
    target.write_text(table_source())
    print(f"wrote {target}", file=sys.stderr)


if __name__ == "__main__":
    main()
