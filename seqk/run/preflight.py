"""What a run checks before it writes anything, in seconds and without a paid call: every
role's key is in the environment (C10), every local model can run, every server a role names
(`api_base`) accepts a connection. `seqk plan` checks the same, short of starting a model."""

from __future__ import annotations

from seqk.config.runspec import RunSpec
from seqk.errors import ConfigError, MissingExtra
from seqk.models import check_endpoints, check_installed, credential_problems, ensure_ready
from seqk.models.batch import sdk_problem
from seqk.models.role import RoleSpec


def _roles(spec: RunSpec) -> list[RoleSpec]:
    # A re-judging run calls its judge alone: the actor's answers are the source run's.
    return [spec.judge] if spec.rejudge_of else [spec.actor, spec.judge, spec.critic]


def check_credentials(spec: RunSpec) -> None:
    """Fail when a role's key is missing (ConfigError, rule C10), or a batched role's SDK
    (MissingExtra). Neither imports a provider's library: a missing key or package is reported
    in well under a second, not after litellm's import."""
    issues = credential_problems(_roles(spec))
    if issues:
        raise ConfigError(spec.source, issues)
    for role in _roles(spec):
        problem = sdk_problem(role)
        if problem:
            raise MissingExtra(problem)


def before_plan(spec: RunSpec) -> None:
    """What `seqk run` refuses before it writes anything, short of starting a model worker: keys,
    a local model's file and llama-cpp-python (MissingExtra), and every role's server."""
    check_credentials(spec)
    for role in (spec.actor, spec.judge, spec.critic):
        check_installed(role)
    check_endpoints([spec.actor, spec.judge, spec.critic])


def before_run(spec: RunSpec) -> None:
    """Keys; every local model's worker generates a few tokens (LocalModelCrashed, naming the cause
    and the rebuild command, when it cannot); every role's server accepts a connection
    (EndpointUnreachable, naming role, model and URL)."""
    check_credentials(spec)
    for role in _roles(spec):
        ensure_ready(role)
    check_endpoints(_roles(spec))
