"""A validated variant resolved against its benchmark: the run's id, its three
roles with their settings, its selected tasks and its fingerprint.

Role defaults chain as in seq_k: judge <- actor, critic <- judge. The judge is
null for a non-LLM verifier; the critic is null for a template feedback mode.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from seqk import benchmark as benchmarks
from seqk.benchmark import Benchmark, FeedbackMode, Task
from seqk.benchmark.prompt import PROMPT_VERSION
from seqk.config.identity import fingerprint, run_id
from seqk.config.variant import RoleParams, Variant, pydantic_issues
from seqk.errors import ConfigError, ConfigIssue
from seqk.models import known_price
from seqk.models.pricing import Price
from seqk.models.retry import RetryPolicy
from seqk.models.role import RoleSpec
from seqk.version import __version__


@dataclass(frozen=True)
class RunSpec:
    """Everything the engine needs to run one variant."""

    run_id: str
    benchmark: Benchmark
    slice_name: str
    metric: str
    k: int
    mode: FeedbackMode
    """The feedback mode, resolved once from its name; the engine hands it to the benchmark."""
    actor: RoleSpec
    judge: RoleSpec
    critic: RoleSpec
    options: BaseModel
    tasks: list[Task]
    continue_: bool
    concurrency: int
    retry: RetryPolicy
    quota: dict[str, int]
    console_char_limit: int
    db: str | None
    s3_sync: bool | None
    s3_bucket: str | None
    export_dir: str | None
    source: str
    notes: tuple[str, ...] = ()
    """Settings the variant gives that this run does not use, said aloud rather than dropped."""
    budget_usd: float | None = None
    """Most the whole run may spend (every role, every invocation), in US dollars."""
    rejudge_of: str | None = None
    """For a re-judging run (seqk.run.rejudge): the run whose actor outputs it grades again."""
    chains: int = 1
    """seq@k: independent chains per task. Not in the fingerprint: like max_tasks, more of it
    extends the run."""

    @property
    def feedback_mode(self) -> str:
        """The feedback mode's name, as run ids, fingerprints and the database spell it."""
        return self.mode.name

    @property
    def seq(self) -> bool:
        """True for seq@k."""
        return self.metric == "seq@k"

    def fingerprint_fields(self) -> dict[str, Any]:
        """Every field that changes results. k is handled apart (extension and restart)."""
        options = self.options.model_dump(mode="json")
        for name in self.benchmark.identity_exempt_options:
            options.pop(name, None)
        fields: dict[str, Any] = {
            "benchmark": self.benchmark.name,
            "slice": self.slice_name,
            "metric": self.metric,
            "feedback_mode": self.feedback_mode,
            "actor": self.actor.result_fields(),
            "judge": self.judge.result_fields(),
            "critic": self.critic.result_fields(),
            "options": options,
            "prompt_version": PROMPT_VERSION,
            "benchmark_prompt_version": self.benchmark.prompt_version,
        }
        data = self.benchmark.data_fingerprint(self.options)
        if data is not None:  # absent rather than null: older runs keep their fingerprint
            fields["data_sha256"] = data
        if self.rejudge_of:
            fields["rejudge_of"] = self.rejudge_of
        return fields

    def fingerprint(self) -> str:
        """sha256 of fingerprint_fields()."""
        return fingerprint(self.fingerprint_fields())

    def config_json(self) -> dict[str, Any]:
        """The resolved variant as stored with the run (no secrets: only key variable names)."""
        return {
            "source": self.source, "benchmark": self.benchmark.name, "metric": self.metric,
            "k": self.k, "chains": self.chains, "feedback_mode": self.feedback_mode,
            "actor": self.actor.public(), "judge": self.judge.public(),
            "critic": self.critic.public(), "options": self.options.model_dump(mode="json"),
            "task_indices": [t.task_index for t in self.tasks], "continue": self.continue_,
            "concurrency": self.concurrency, "retry": self.retry.model_dump(),
            "quota": self.quota, "budget_usd": self.budget_usd, "seqk_version": __version__,
        } | ({"rejudge_of": self.rejudge_of} if self.rejudge_of else {})


def _role(role: str, model: str | None, variant: Variant, own: RoleParams,
          default_temperature: float | None) -> RoleSpec:
    if model is None:
        return RoleSpec(role=role, model=None)
    temperature = own.temperature if own.temperature is not None else default_temperature
    return RoleSpec(
        role=role, model=model, temperature=temperature,
        max_tokens=own.max_tokens or variant.max_tokens,
        top_p=own.top_p,
        seed=own.seed if own.seed is not None else variant.seed,
        api_base=own.api_base or variant.api_base,
        api_key_env=own.api_key_env or variant.api_key_env,
        max_concurrency=own.max_concurrency,
        timeout_s=own.timeout_s,
        extra=dict(own.extra),
        price=Price(own.price.input, own.price.input if own.price.cached_input is None
                    else own.price.cached_input, own.price.output) if own.price else None,
        budget_usd=own.budget_usd,
    )


def resolve(variant: Variant, source: str | os.PathLike[str] = "(variant)") -> RunSpec:
    """Check the variant against its benchmark and resolve roles, tasks and run id.

    Every problem is collected and raised together as one ConfigError.
    """
    source = str(source)
    issues: list[ConfigIssue] = []
    known = benchmarks.names()
    if variant.benchmark is None:
        raise ConfigError(source, [ConfigIssue(
            "C04", "benchmark", f"missing: put the file under variants/<bench>/ or set "
            f"`benchmark:` (one of {', '.join(known)})")])
    if variant.benchmark not in known:
        raise ConfigError(source, [ConfigIssue(
            "C04", "benchmark", f"unknown benchmark {variant.benchmark!r}; known: {', '.join(known)}")])
    bench = benchmarks.get(variant.benchmark)

    mode_name = variant.feedback_mode or bench.default_feedback_mode
    mode = None
    try:
        mode = bench.feedback_mode(mode_name)
    except KeyError:
        modes = ", ".join(m.name for m in bench.feedback_modes)
        issues.append(ConfigIssue(
            "C05", "feedback_mode", f"{bench.name} has no mode {mode_name!r}; it has: {modes}"))

    options: BaseModel | None = None
    try:
        options = bench.Options.model_validate(variant.options)
    except ValidationError as exc:
        issues += [ConfigIssue("C08", i.field, i.message) if i.rule == "C03"
                   else ConfigIssue(i.rule if i.rule != "C02" else "C08", i.field, i.message)
                   for i in pydantic_issues(exc, prefix="options")]

    for role in ("actor", "judge", "critic"):
        issues += [ConfigIssue("C09", f"{role}.extra.{path}",
                               "looks like a secret: keep keys in the environment and name the "
                               "variable with api_key_env; seqk never stores a secret")
                   for path in _secret_paths(getattr(variant, role).extra)]

    issues += _mock_issues(variant)

    if variant.task_indices is not None and variant.max_tasks is not None:
        issues.append(ConfigIssue("C06", "task_indices", "set either task_indices or max_tasks, not both"))
    if variant.metric == "pass@k" and variant.chains != 1:
        issues.append(ConfigIssue("C03", "chains", f"chains is for seq@k (got {variant.chains} with "
                                  "pass@k, whose k samples are already independent: raise k instead)"))

    tasks: list[Task] = []
    if options is not None:
        all_tasks = bench.load_tasks(options)
        tasks = _select(all_tasks, variant, issues)

    if issues:
        raise ConfigError(source, issues)
    assert options is not None and mode is not None

    llm_judge = bench.verifier == "llm"
    judge_model = (variant.judge_model or variant.model) if llm_judge else None
    critic_model = None
    if mode.llm_critic:
        critic_model = variant.critic_model or variant.judge_model or variant.model
    notes = []
    if not llm_judge and variant.judge_model is not None:
        notes.append(f"judge_model is not used: {bench.name}'s verifier is {bench.verifier}")
    if not mode.llm_critic and variant.critic_model is not None:
        notes.append(f"critic_model is not used: feedback mode {mode.name!r} is a template")
    if variant.metric == "pass@k" and mode.llm_critic:
        notes.append("pass@k never asks the critic; the feedback mode only names the run")
    actor = _role("actor", variant.model, variant, variant.actor, variant.temperature)
    judge = _role("judge", judge_model, variant, variant.judge, 0.0)
    critic = _role("critic", critic_model, variant, variant.critic, variant.temperature)
    issues += unpriced_roles([actor, judge, critic if variant.metric == "seq@k" else None],
                             variant.budget_usd)
    if issues:
        raise ConfigError(source, issues)
    slice_name = bench.slice_name(options)
    rid = run_id(slice_name=slice_name, metric=variant.metric, actor_model=variant.model,
                 verifier=bench.verifier, judge_model=judge_model, feedback_mode=mode.name,
                 critic_model=critic_model, tag=variant.tag)
    return RunSpec(
        run_id=rid, benchmark=bench, slice_name=slice_name, metric=variant.metric, k=variant.k,
        mode=mode, actor=actor, judge=judge, critic=critic, options=options,
        tasks=tasks, continue_=variant.continue_, concurrency=variant.concurrency,
        retry=variant.retry, quota=dict(variant.quota),
        console_char_limit=variant.console_char_limit, db=variant.db, s3_sync=variant.s3_sync,
        s3_bucket=variant.s3_bucket, export_dir=variant.export_dir, source=source,
        notes=tuple(notes), budget_usd=variant.budget_usd, chains=variant.chains,
    )


def unpriced_roles(roles: list[RoleSpec | None], run_budget: float | None) -> list[ConfigIssue]:
    """C11: every role a budget covers (all of them under a run budget; a role with its own
    budget) whose model has no known price: its spend could not be counted, so it cannot be held."""
    issues = []
    for role in roles:
        if role is None or role.model is None or (run_budget is None and role.budget_usd is None):
            continue
        if known_price(role.model, role.price, role.api_base) is None:
            issues.append(ConfigIssue(
                "C11", f"{role.role}.price",
                f"the {role.role} ({role.model}) has no known price, so a budget cannot hold its "
                f"spend: set {role.role}.price: {{input, cached_input, output}} (US$ per million tokens)"))
    return issues


def _mock_issues(variant: Variant) -> list[ConfigIssue]:
    """C03 for each `mock/...` model id that nothing would answer (every role's model is one of these keys)."""
    from seqk.models import mock_problem  # models imports this module

    issues = []
    for key in ("model", "judge_model", "critic_model"):
        model = getattr(variant, key)
        problem = mock_problem(model) if model and model.startswith("mock/") else None
        if problem:
            issues.append(ConfigIssue("C03", key, problem))
    return issues


# api_key, x-api-key, access_token, Authorization ... but not max_tokens or top_k.
_SECRET_NAME = re.compile(r"(^|[_-])(api[_-]?key|key|token|secret|password|authorization|credentials?)$")


def _secret_paths(extra: Any, prefix: str = "") -> list[str]:
    """Paths of entries in a role's `extra` whose name says they hold a secret."""
    if not isinstance(extra, dict):
        return []
    found = []
    for name, value in extra.items():
        path = f"{prefix}{name}"
        if _SECRET_NAME.search(str(name).lower()):
            found.append(path)
        else:
            found += _secret_paths(value, path + ".")
    return found


def _select(all_tasks: list[Task], variant: Variant, issues: list[ConfigIssue]) -> list[Task]:
    if variant.task_indices is not None:
        n = len(all_tasks)
        seen: set[int] = set()
        for pos, index in enumerate(variant.task_indices):
            if not 1 <= index <= n:
                issues.append(ConfigIssue(
                    "C07", f"task_indices[{pos}]", f"{index} is out of range: this slice has tasks 1..{n}"))
            elif index in seen:
                issues.append(ConfigIssue("C07", f"task_indices[{pos}]", f"{index} is listed twice"))
            seen.add(index)
        return [all_tasks[i - 1] for i in sorted(seen) if 1 <= i <= n]
    if variant.max_tasks is not None:
        return all_tasks[: variant.max_tasks]
    return all_tasks


def load(path: str | os.PathLike[str], overrides: dict[str, Any] | None = None) -> RunSpec:
    """Read, validate and resolve a variant YAML in one step."""
    from seqk.config.variant import load_variant

    return resolve(load_variant(path, overrides), Path(path))
