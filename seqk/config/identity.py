"""Run identity: where a run lives (run_id) and what it must not be mixed with
(the fingerprint of every setting that changes results).

run_id = <slice>/<metric>/<agent>/<verifier>/<feedback>, as in seq_k, with one
fix: an LLM-critic feedback slot holds the mode *and* the critic model, so two
critic modes with the same critic never share a run. A seq@k retry protocol other than the
seed's (a variant's `prompt:`) adds `+prompt-<hash>` to that slot, and a variant's `tag` is
appended last (`<feedback>@<tag>`), so a sweep over temperature or max_tokens keeps seq_k's five
slots and still gives each setting a run of its own.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def path_safe(model_id: str) -> str:
    """A model id as a path slot: '/' becomes '__'."""
    return model_id.replace("/", "__")


def metric_slot(metric: str) -> str:
    """'pass@k' -> 'passk', 'seq@k' -> 'seqk'."""
    return metric.replace("@", "")


def feedback_slot(feedback_mode: str, critic_model: str | None) -> str:
    """The feedback slot: the mode name, plus '.<critic>' when an LLM critic writes it."""
    if critic_model is None:
        return feedback_mode
    return f"{feedback_mode}.{path_safe(critic_model)}"


def run_id(*, slice_name: str, metric: str, actor_model: str, verifier: str,
           judge_model: str | None, feedback_mode: str, critic_model: str | None,
           tag: str | None = None, prompt: str | None = None) -> str:
    """The run's id, which is also its folder path in exports and S3. `prompt`: the protocol's
    slot (seqk.config.prompt.protocol_slot), None for the seed's."""
    verifier_slot = path_safe(judge_model) if judge_model is not None else verifier
    last = feedback_slot(feedback_mode, critic_model) + (f"+{prompt}" if prompt else "") + (f"@{tag}" if tag else "")
    return "/".join([slice_name, metric_slot(metric), path_safe(actor_model), verifier_slot, last])


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces: equal values, equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def fingerprint(fields: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of the result-changing fields."""
    return hashlib.sha256(canonical_json(fields).encode()).hexdigest()


def differing_fields(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Names of fields whose values differ (or exist in only one), flattened one level."""
    out = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out += [f"{key}.{sub}" for sub in differing_fields(a, b)]
        elif canonical_json(a) != canonical_json(b):
            out.append(key)
    return out
