"""A validated variant resolved against its benchmark: the run's id, its three
roles with their settings, its selected tasks and its fingerprint (RunSpec), apart from this
invocation's settings (RunSettings: the database, what --verbose prints, export and upload).

Role defaults chain as in seq_k: judge <- actor, critic <- judge. The judge is
null for a non-LLM verifier; the critic is null for a template feedback mode.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from seqk.benchmark import AgenticBenchmark, Benchmark, FeedbackMode, Task, discovery
from seqk.benchmark.prompt import DEFAULT, PROMPT_VERSION, RetryProtocol
from seqk.config.identity import fingerprint, run_id
from seqk.config.prompt import protocol_config, protocol_slot, resolve_protocol
from seqk.config.variant import RoleParams, Variant, pydantic_issues, secret_paths
from seqk.errors import ConfigError, ConfigIssue
from seqk.models import known_price
from seqk.models.retry import RetryPolicy
from seqk.models.role import RoleSpec
from seqk.seeds import SEED_SCHEME
from seqk.version import __version__

T = TypeVar("T")


@dataclass(frozen=True)
class RunSettings:
    """Where this invocation writes and what it shows: never part of the run's identity nor
    stored with it, so two invocations of one run may differ here. Notebooks and `seqk
    rejudge` take the defaults."""

    db: str | None = None
    """The variant's `db:`; the command line's --db (or a function's `db` argument) wins."""
    console_char_limit: int = 3000
    """How much of each prompt and output --verbose prints; saved data is never cut."""
    s3_sync: bool | None = None
    """Upload the exported run to S3 at the end; None: only when a bucket is configured."""
    s3_bucket: str | None = None
    """Bucket for s3_sync (else $SEQK_S3_BUCKET)."""
    export_dir: str | None = None
    """Where the run's folder tree is exported at the end (None: the database's folder)."""

    def database(self, db: T | None) -> T | str | None:
        """The database this invocation uses: `db` when given, else the variant's `db:`
        (None: seqk.store picks $SEQK_DB, then runs/seqk.duckdb). Kept as given: a lake URL's
        `s3://` would lose a slash to Path."""
        return db if db is not None else self.db


@dataclass(frozen=True)
class RunSpec:
    """The run: its identity (run id, fingerprint fields), its tasks and k, and how it is carried
    out (concurrency, retry, quota, budget), all stored with it. This invocation's own settings
    are a RunSettings."""

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
    continue_: bool | None
    """`continue:` as written: True extends, False restarts, None (not given) asks first."""
    concurrency: int
    retry: RetryPolicy
    quota: dict[str, int]
    source: str
    """Where the run was defined: the variant's path, or the command that made it."""
    notes: tuple[str, ...] = ()
    """Settings the variant gives that this run does not use, said aloud rather than dropped."""
    budget_usd: float | None = None
    """Most the whole run may spend (every role, every invocation), in US dollars."""
    executor: str = "local"
    """'local' | 'ray' (seqk.run.executor); not part of the fingerprint."""
    ray_address: str | None = None
    """The Ray cluster for executor 'ray'; None starts a local one."""
    rejudge_of: str | None = None
    """For a re-judging run (seqk.run.rejudge): the run whose actor outputs it grades again."""
    batch_poll_s: float = 30.0
    """Batch mode: seconds between two polls of a batch in flight."""

    @property
    def batched(self) -> bool:
        """True when a role's calls go through a batch API (seqk.run.rounds runs it)."""
        return self.actor.batch or (self.seq and self.critic.batch)
    chains: int = 1
    """seq@k: independent chains per task. Not in the fingerprint: like max_tasks, more of it
    extends the run."""
    protocol: RetryProtocol = DEFAULT
    """How seq@k prompts show the task, the framing and the earlier attempts (the variant's
    `prompt:`); in the fingerprint when it is not the default."""
    primary: bool = False
    """The variant marks this run's comparison as the study's primary one (stored in its config,
    not in its identity)."""

    @property
    def feedback_mode(self) -> str:
        """The feedback mode's name, as run ids, fingerprints and the database spell it."""
        return self.mode.name

    @property
    def seq(self) -> bool:
        """True for seq@k."""
        return self.metric == "seq@k"

    @property
    def seeded(self) -> bool:
        """True when some role samples with a seed (derived per call by seqk.seeds)."""
        return any(role.seed is not None for role in (self.actor, self.judge, self.critic))

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
        if self.seeded:  # absent when unseeded: those runs keep their fingerprint
            fields["seed_scheme"] = SEED_SCHEME
        if protocol := self.protocol.identity():  # absent for the seed's: older runs keep theirs
            fields["prompt"] = protocol
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
            "task_indices": [t.task_index for t in self.tasks], "continue": bool(self.continue_),
            "concurrency": self.concurrency, "retry": self.retry.model_dump(),
            "quota": self.quota, "budget_usd": self.budget_usd, "seqk_version": __version__,
        } | ({"rejudge_of": self.rejudge_of} if self.rejudge_of else {}) | (
            {"seed_scheme": SEED_SCHEME} if self.seeded else {}) | protocol_config(self.protocol) | (
            {"primary": True} if self.primary else {})


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
        price=own.price.resolve() if own.price else None,
        budget_usd=own.budget_usd,
        batch=variant.batch if own.batch is None else own.batch,
        service_tier=own.service_tier,
    )


def resolve(variant: Variant, source: str | os.PathLike[str] = "(variant)") -> RunSpec:
    """Check the variant against its benchmark and resolve roles, tasks and run id.

    Every problem is collected and raised together as one ConfigError.
    """
    source = str(source)
    issues: list[ConfigIssue] = []
    if variant.benchmark is None:
        raise ConfigError(source, [ConfigIssue(
            "C04", "benchmark", f"missing: put the file under variants/<bench>/ or set "
            f"`benchmark:` (one of {', '.join(discovery.names())})")])
    # find() imports the variant's own benchmark folder alone; names() imports them all.
    if discovery.find(variant.benchmark) is None:
        raise ConfigError(source, [ConfigIssue(
            "C04", "benchmark", f"unknown benchmark {variant.benchmark!r}; known: {', '.join(discovery.names())}")])
    bench = discovery.get(variant.benchmark)

    mode_name = variant.feedback_mode or bench.default_feedback_mode
    mode = None
    try:
        mode = bench.feedback_mode(mode_name)
    except KeyError:
        modes = ", ".join(m.name for m in bench.feedback_modes)
        issues.append(ConfigIssue(
            "C05", "feedback_mode", f"{bench.name} has no mode {mode_name!r}; it has: {modes}"))

    protocol = DEFAULT
    notes: list[str] = []
    if mode is not None:
        protocol, found, notes = resolve_protocol(variant.prompt, mode, bench, variant.metric == "seq@k")
        issues += found

    options: BaseModel | None = None
    try:
        options = bench.Options.model_validate(variant.options)
    except ValidationError as exc:
        issues += [ConfigIssue("C08", i.field, i.message) if i.rule == "C03"
                   else ConfigIssue(i.rule if i.rule != "C02" else "C08", i.field, i.message)
                   for i in pydantic_issues(exc, prefix="options", model=bench.Options)]

    for role in ("actor", "judge", "critic"):
        issues += [ConfigIssue("C09", f"{role}.extra.{path}",
                               "looks like a secret: keep keys in the environment and name the "
                               "variable with api_key_env; seqk never stores a secret")
                   for path in secret_paths(getattr(variant, role).extra)]

    issues += _model_issues(variant)

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

    verifier = bench.verifier_of(options)
    llm_judge = verifier == "llm"
    judge_model = (variant.judge_model or variant.model) if llm_judge else None
    critic_model = None
    if mode.llm_critic:
        critic_model = variant.critic_model or variant.judge_model or variant.model
    if not llm_judge and variant.judge_model is not None:
        notes.append(f"judge_model is not used: {bench.name}'s verifier is {verifier}")
    if not mode.llm_critic and variant.critic_model is not None:
        notes.append(f"critic_model is not used: feedback mode {mode.name!r} is a template")
    if variant.metric == "pass@k" and mode.llm_critic:
        notes.append("pass@k never asks the critic; the feedback mode only names the run")
    actor = _role("actor", variant.model, variant, variant.actor, variant.temperature)
    judge = _role("judge", judge_model, variant, variant.judge, 0.0)
    critic = _role("critic", critic_model, variant, variant.critic, variant.temperature)
    judge = dataclasses.replace(judge, batch=False)  # judges run synchronously (docs/batch.md)
    issues += batch_issues(variant, bench, [actor, critic])
    called = [actor, judge, critic if variant.metric == "seq@k" else None]
    issues += unpriced_roles(called, variant.budget_usd)
    issues += uncapped_roles(called, variant.budget_usd)
    if variant.chains > 1 and (actor.batch or critic.batch):
        # Batch rounds run one chain per task (the slot they track).
        issues.append(ConfigIssue("C03", "chains", "chains above 1 run with synchronous calls only: "
                                  "drop batch, or keep chains: 1"))
    if variant.executor == "ray" and (actor.batch or critic.batch):
        # Batch rounds run in the driver: the provider does the work, there is nothing to spread.
        issues.append(ConfigIssue("C03", "executor", "executor: ray runs synchronous calls only: batch "
                                  "rounds run from one process (drop batch, or executor: ray)"))
    if issues:
        raise ConfigError(source, issues)
    slice_name = bench.slice_name(options)
    rid = run_id(slice_name=slice_name, metric=variant.metric, actor_model=variant.model,
                 verifier=verifier, judge_model=judge_model, feedback_mode=mode.name,
                 critic_model=critic_model, tag=variant.tag, prompt=protocol_slot(protocol))
    return RunSpec(
        run_id=rid, benchmark=bench, slice_name=slice_name, metric=variant.metric, k=variant.k,
        mode=mode, actor=actor, judge=judge, critic=critic, options=options,
        tasks=tasks, continue_=variant.continue_, concurrency=variant.concurrency,
        retry=variant.retry, quota=dict(variant.quota), source=source,
        notes=tuple(notes), budget_usd=variant.budget_usd, batch_poll_s=variant.batch_poll_s,
        executor=variant.executor, ray_address=variant.ray_address, chains=variant.chains,
        protocol=protocol, primary=variant.primary,
    )


def batch_issues(variant: Variant, bench: Benchmark, roles: list[RoleSpec]) -> list[ConfigIssue]:
    """C03 for batch settings this run cannot honour: a batched judge, a batched model with no
    batch API, an agent harness (it makes its own calls), flex and batch on one role."""
    from seqk.models.batch import batch_problem

    issues = []
    if variant.judge.batch:
        issues.append(ConfigIssue("C03", "judge.batch", "judges run synchronously (a verdict decides "
                                  "whether the next round runs): remove judge.batch"))
    for role in roles:
        if role.model is None or not role.batch:
            continue
        problem = batch_problem(role)
        if problem is None and isinstance(bench, AgenticBenchmark) and role.role == "actor":
            problem = f"{bench.name} runs its own agent harness, which makes its calls itself"
        if problem is None and role.service_tier == "flex":
            problem = "batch and service_tier: flex exclude each other (pick one discount)"
        if problem:
            issues.append(ConfigIssue("C03", f"{role.role}.batch", problem))
    return issues


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


def uncapped_roles(roles: list[RoleSpec | None], run_budget: float | None) -> list[ConfigIssue]:
    """C12: under any budget, every role that makes calls needs max_tokens. A budget reserves
    each call's worst case before it is sent, and without a cap on output tokens there is none
    (the judge's and critic's worst cases also bound the answer by the actor's max_tokens)."""
    budgeted = run_budget is not None or any(r is not None and r.budget_usd is not None for r in roles)
    if not budgeted:
        return []
    return [ConfigIssue(
        "C12", f"{role.role}.max_tokens",
        f"a budget reserves each call's worst-case cost before it is sent, and the {role.role} "
        f"({role.model}) has no cap on output tokens: set max_tokens (for every role) or "
        f"{role.role}.max_tokens")
        for role in roles if role is not None and role.model is not None and role.max_tokens is None]


def _model_issues(variant: Variant) -> list[ConfigIssue]:
    """C03 for each role's model id that no provider would serve: an unknown mock, a `mock/py:`
    script that does not import, a misspelled provider (`openaii/...`). Checked before any run is
    registered, and without importing a provider's client."""
    from seqk.models import model_problem  # models imports this module

    issues = []
    for key, own in (("model", variant.actor), ("judge_model", variant.judge), ("critic_model", variant.critic)):
        model = getattr(variant, key)
        problem = model_problem(model, own.api_base or variant.api_base) if model else None
        if problem:
            issues.append(ConfigIssue("C03", key, problem))
    return issues


def _select(all_tasks: list[Task], variant: Variant, issues: list[ConfigIssue]) -> list[Task]:
    if variant.task_indices is not None:
        # Indices are canonical, not positions in the list: a slice that filters a file (or
        # skips an invalid record) keeps each record's position, so it may have gaps.
        by_index = {t.task_index: t for t in all_tasks}
        n = len(all_tasks)
        contiguous = sorted(by_index) == list(range(1, n + 1))
        seen: set[int] = set()
        for pos, index in enumerate(variant.task_indices):
            if index not in by_index:
                why = (f"is out of range: this slice has tasks 1..{n}" if contiguous else
                       f"is not a task of this slice: its {n} tasks lie between {min(by_index)} and "
                       f"{max(by_index)}, with gaps where records are outside the slice or skipped")
                issues.append(ConfigIssue("C07", f"task_indices[{pos}]", f"{index} {why}"))
            elif index in seen:
                issues.append(ConfigIssue("C07", f"task_indices[{pos}]", f"{index} is listed twice"))
            seen.add(index)
        return [by_index[i] for i in sorted(seen) if i in by_index]
    if variant.max_tasks is not None:
        return all_tasks[: variant.max_tasks]
    return all_tasks


def settings_of(variant: Variant) -> RunSettings:
    """The variant's settings for this invocation."""
    return RunSettings(db=variant.db, console_char_limit=variant.console_char_limit,
                       s3_sync=variant.s3_sync, s3_bucket=variant.s3_bucket, export_dir=variant.export_dir)


def load(path: str | os.PathLike[str], overrides: dict[str, Any] | None = None) -> RunSpec:
    """Read, validate and resolve a variant YAML in one step."""
    return load_with_settings(path, overrides)[0]


def load_with_settings(path: str | os.PathLike[str], overrides: dict[str, Any] | None = None,
                       labels: dict[str, str] | None = None) -> tuple[RunSpec, RunSettings]:
    """Read, validate and resolve a variant YAML with `overrides` (seqk.config.overrides; a problem
    one caused names its label): the run, and this invocation's settings."""
    from seqk.config.overrides import attributed
    from seqk.config.variant import load_variant

    with attributed(labels or {}):
        variant = load_variant(path, overrides)
        return resolve(variant, Path(path)), settings_of(variant)
