"""Before a run spends anything (seqk.api re-exports these): is a model reachable (`probe`), does
the embedded one run here (`doctor`), where each endpoint's limit on calls in flight starts (`limits`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from seqk.models.local.doctor import DoctorReport
    from seqk.models.probe import ProbeResult
    from seqk.run.limits import RememberedLimit
    from seqk.store.database import DbLike


def probe(targets: Sequence[str], *, api_base: str | None = None, api_key_env: str | None = None) -> list[ProbeResult]:
    """Call each distinct model once with a tiny prompt (`seqk probe`): a variant YAML's roles, or
    model ids (at `api_base`, its key in the variable `api_key_env`)."""
    from seqk.config import runspec
    from seqk.models.probe import probe
    from seqk.models.role import RoleSpec

    if len(targets) == 1 and targets[0].endswith((".yaml", ".yml")):
        spec = runspec.load(Path(targets[0]))
        return probe([spec.actor, spec.judge, spec.critic])
    return probe([RoleSpec(role="actor", model=m, api_base=api_base, api_key_env=api_key_env) for m in targets])


def doctor(model: str = "local/smollm2-135m") -> DoctorReport:
    """Whether the embedded model runs on this machine (`seqk doctor`): loaded in a worker, a few
    tokens generated, the llama.cpp build's CPU features beside this CPU's."""
    from seqk.models.local.doctor import doctor

    return doctor(model)


def limits(db: DbLike = None, *, model: str | None = None, api_base: str | None = None) -> list[RememberedLimit]:
    """The limit on calls in flight each endpoint last sustained (`seqk limits`), of `model` and
    `api_base` when given."""
    from seqk.run.limits import list_limits

    return [r for r in list_limits(db) if (model is None or r.model == model)
            and (api_base is None or r.api_base in (api_base, api_base.rstrip("/")))]


def reset_limits(db: DbLike = None, *, model: str | None = None, api_base: str | None = None) -> list[RememberedLimit]:
    """Forget the remembered limits (`seqk limits --reset`), of `model` and `api_base` when given:
    the next run against them slow-starts from 4. Returns what was forgotten."""
    from seqk.run.limits import reset_limits

    return reset_limits(db, model, api_base)
