"""A variant YAML, validated whole: every key checked, every problem listed at
once with a rule id and its field path, before anything touches the database.

Rule ids (stable; docs/variants.md lists them, and tests/test_docs.py checks the two agree):
    C01 the file is missing or is not valid YAML (with its line)
    C02 unknown key
    C03 wrong type or value (a model id no provider serves included: an unknown mock/..., a
        provider/ prefix litellm does not route)
    C04 unknown benchmark, or the path and `benchmark:` disagree
    C05 feedback mode the benchmark does not have
    C06 task_indices and max_tasks both set
    C07 task_indices out of range, or duplicated
    C08 a benchmark option is wrong
    C09 a secret (API key, token) written into the variant instead of the environment
    C10 a role's key is not in the environment (checked by seqk.models before a run)
    C11 a budget covers a role whose model has no known price (and no `price:` in the variant)
    C12 a variant with a budget leaves a role that makes calls without max_tokens
    C13 a `prompt:` template holds an unknown placeholder or cannot be filled in
    C14 a sweep file is wrong (its base, matrix or partners)
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from seqk.config.prompt import PromptParams
from seqk.errors import ConfigError, ConfigIssue
from seqk.models.pricing import Price
from seqk.models.retry import RetryPolicy

_METRICS = {"pass@k": "pass@k", "passk": "pass@k", "seq@k": "seq@k", "seqk": "seq@k"}


class PriceParams(BaseModel):
    """A role's price in US dollars per million tokens; wins over seqk's table and litellm's map."""

    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0)
    """Dollars per million input tokens (those not read from the provider's cache)."""
    cached_input: float | None = Field(None, ge=0)
    """Dollars per million cached input tokens; defaults to `input`."""
    output: float = Field(ge=0)
    """Dollars per million output tokens (thinking tokens included)."""
    cache_write: float | None = Field(None, ge=0)
    """Dollars per million input tokens written to the provider's cache; defaults to 1.25x
    `input` for Anthropic models, `input` elsewhere."""
    batch_input: float | None = Field(None, ge=0)
    """Dollars per million input tokens through the batch API; defaults to half of `input`."""
    batch_output: float | None = Field(None, ge=0)
    """Dollars per million output tokens through the batch API; defaults to half of `output`."""
    flex_input: float | None = Field(None, ge=0)
    """Dollars per million input tokens at the flex tier; defaults to half of `input`."""
    flex_output: float | None = Field(None, ge=0)
    """Dollars per million output tokens at the flex tier; defaults to half of `output`."""

    def resolve(self) -> Price:
        """The Price the pool charges: cached input and cache writes follow each tier's
        discount on input."""
        cached = self.input if self.cached_input is None else self.cached_input

        def tier(inp: float | None, out: float | None) -> Price | None:
            if inp is None and out is None:
                return None
            inp = self.input / 2 if inp is None else inp
            ratio = inp / self.input if self.input else 0.5
            return Price(inp, cached * ratio, self.output / 2 if out is None else out,
                         None if self.cache_write is None else self.cache_write * ratio)

        return Price(self.input, cached, self.output, self.cache_write,
                     batch=tier(self.batch_input, self.batch_output),
                     flex=tier(self.flex_input, self.flex_output))


API_BASE = r"^https?://[^/\s:]+"
"""An `api_base` is an http(s) URL with a host (a port and a path may follow)."""


class RoleParams(BaseModel):
    """Generation settings for one role; unset fields fall back to the variant's top level."""

    model_config = ConfigDict(extra="forbid")

    temperature: float | None = Field(None, ge=0)
    """Sampling temperature for this role."""
    max_tokens: int | None = Field(None, gt=0)
    """Cap on output tokens per call."""
    top_p: float | None = Field(None, gt=0, le=1)
    """Nucleus sampling."""
    seed: int | None = None
    """Sampling seed, passed to providers that honour it."""
    api_base: str | None = Field(None, pattern=API_BASE)
    """An OpenAI-compatible server for this role (vLLM, llama.cpp server, Ollama)."""
    api_key_env: str | None = None
    """Name of the environment variable that holds this role's API key (never the key itself)."""
    max_concurrency: int | None = Field(None, gt=0)
    """Calls in flight at once to this role's model."""
    timeout_s: float | None = Field(None, gt=0)
    """Seconds before one call is abandoned (and retried as transient)."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Further keyword arguments passed to the provider as they are (e.g. reasoning_effort)."""
    price: PriceParams | None = None
    """This role's price, for a model seqk cannot price (a self-hosted server) or a negotiated rate."""
    budget_usd: float | None = Field(None, gt=0)
    """Most this role may spend on the run, in US dollars, across every invocation."""
    batch: bool | None = None
    """Send this role's calls through the provider's batch API (openai/ and anthropic/ models):
    half price, results within the provider's window instead of seconds; defaults to the
    variant's `batch`. Judges always run synchronously (docs/batch.md says why)."""
    service_tier: Literal["flex"] | None = None
    """'flex': OpenAI's flex tier (synchronous, about half price, slower, more 429s)."""


class Variant(BaseModel):
    """One variant YAML = one run."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    benchmark: str | None = None
    """Benchmark name; taken from the path variants/<bench>/... when absent."""
    metric: Literal["pass@k", "seq@k"]
    """pass@k (k independent samples) or seq@k (k attempts in sequence with feedback);
    'passk' and 'seqk' are accepted too."""
    k: int = Field(gt=0)
    """Maximum attempts per task."""
    chains: int = Field(1, gt=0)
    """seq@k only: independent chains per task, each up to k attempts and stopping at its first
    success (the width of the width x depth frontier). Raising it later extends the run; lowering
    it is refused."""
    primary: bool = False
    """Marks this run's comparison (its lift over its pass@k partner) as the study's primary one,
    decided before looking: `seqk report --compare` names it, its p-value is the confirmatory one,
    and every other p is read with its Benjamini-Hochberg q-value. Not part of the run's identity
    (its id and fingerprint are the same with or without it)."""
    tag: str | None = Field(None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$")
    """Makes this variant a run of its own, `<slice>/<metric>/<agent>/<verifier>/<feedback>@<tag>`,
    for sweeps over settings the five slots do not name (temperature, max_tokens, ...)."""
    feedback_mode: str | None = None
    """How a failed seq@k attempt is explained to the next; defaults to the benchmark's."""
    model: str
    """The actor: the model under test, as a litellm id (provider/model), local/... or mock/..."""
    judge_model: str | None = None
    """Judge for LLM-verified benchmarks; defaults to `model`. Unused (null) for other verifiers."""
    critic_model: str | None = None
    """Critic for LLM feedback modes; defaults to `judge_model`. Null for template modes."""
    temperature: float = Field(0.7, ge=0)
    """Actor (and critic) temperature; the judge defaults to 0."""
    max_tokens: int | None = Field(None, gt=0)
    """Cap on output tokens per call, every role."""
    seed: int | None = None
    """Sampling seed, every role."""
    api_base: str | None = Field(None, pattern=API_BASE)
    """An OpenAI-compatible server for every role without its own."""
    api_key_env: str | None = None
    """Environment variable holding the key for api_base."""
    actor: RoleParams = Field(default_factory=RoleParams)
    """Actor-only settings."""
    judge: RoleParams = Field(default_factory=RoleParams)
    """Judge-only settings (temperature defaults to 0)."""
    critic: RoleParams = Field(default_factory=RoleParams)
    """Critic-only settings."""
    task_indices: list[int] | None = None
    """1-based canonical indices to run; excludes max_tasks."""
    max_tasks: int | None = Field(None, gt=0)
    """Run only the first N tasks."""
    continue_: bool | None = Field(None, alias="continue")
    """With a larger k: true keeps the old attempts and goes on; false restarts the run in a new
    generation (the old attempts stop counting). Not given: a larger k that would discard paid
    attempts is refused, saying what they cost (`seqk run --restart` restarts anyway)."""
    s3_sync: bool | None = None
    """Upload the exported run to S3 at the end; on by default only when a bucket is configured."""
    s3_bucket: str | None = None
    """Bucket for s3_sync (else $SEQK_S3_BUCKET)."""
    export_dir: str | None = None
    """Where the run's folder tree is exported at the end (default: the database's folder, runs/ for
    runs/seqk.duckdb and for a lake)."""
    console_char_limit: int = Field(3000, ge=0)
    """How much of each prompt/output --verbose prints; saved data is never cut."""
    concurrency: int = Field(16, gt=0)
    """Tasks in flight at once."""
    executor: Literal["local", "ray"] = "local"
    """Where attempts run: `local` (this process, asyncio) or `ray` (one worker per node of a Ray
    cluster; a seq@k chain stays on one worker). Not part of the run's identity."""
    ray_address: str | None = None
    """The Ray cluster for `executor: ray` (e.g. ray://head:10001 or auto); None starts a local one."""
    db: str | None = None
    """DuckDB file, or a lake URL `ducklake:postgres:<dsn>[;data=s3://bucket/prefix/]` (else --db,
    $SEQK_DB, runs/seqk.duckdb)."""
    retry: RetryPolicy = Field(default_factory=RetryPolicy)
    """Retry policy for transient provider errors."""
    budget_usd: float | None = Field(None, gt=0)
    """Most the whole run (every role) may spend, in US dollars, across every invocation."""
    batch: bool = False
    """Send the actor's and the critic's calls through their provider's batch API (see each
    role's `batch`): pass@k is one batch, seq@k one batch per round of attempts."""
    batch_poll_s: float = Field(30.0, gt=0)
    """Seconds between two polls of a batch in flight."""
    prompt: PromptParams = Field(default_factory=PromptParams)
    """seq@k: the retry protocol (system message, framings, how earlier attempts and feedback are
    shown); every key optional, the seed's by default. Part of the run's identity when it differs."""
    quota: dict[str, int] = Field(default_factory=dict)
    """Per-model ceiling on calls in this invocation; past it, attempts wait for the next run."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Benchmark-specific options, validated by the benchmark."""

    @field_validator("metric", mode="before")
    @classmethod
    def _metric_alias(cls, value: Any) -> Any:
        return _METRICS.get(value, value) if isinstance(value, str) else value


# api_key, x-api-key, access_token, Authorization ... but not max_tokens or top_k.
_SECRET_NAME = re.compile(r"(^|[_-])(api[_-]?key|key|token|secret|password|authorization|credentials?)$")


def secret_paths(extra: Any, prefix: str = "") -> list[str]:
    """Paths of entries in a role's `extra` whose name says they hold a secret."""
    if not isinstance(extra, dict):
        return []
    found = []
    for name, value in extra.items():
        path = f"{prefix}{name}"
        if _SECRET_NAME.search(str(name).lower()):
            found.append(path)
        else:
            found += secret_paths(value, path + ".")
    return found


def _field_path(loc: tuple[Any, ...]) -> str:
    parts = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            parts.append(("." if parts else "") + ("continue" if item == "continue_" else str(item)))
    return "".join(parts) or "(top level)"


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """' (did you mean 'x'?)' for the closest of `choices` to a mistyped `word`, or ''."""
    close = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def known_keys(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The keys a mapping at `loc` (the path of an unknown key, without the key) may hold, by
    their YAML spelling: the fields of the model reached by following `loc` from `model`."""
    for part in loc:
        field = model.model_fields.get("continue_" if part == "continue" else str(part))
        inner = [t for t in (field.annotation, *get_args(field.annotation)) if isinstance(t, type)
                 and issubclass(t, BaseModel)] if field is not None else []
        if not inner:
            return []
        model = inner[0]
    return [info.alias or name for name, info in model.model_fields.items()]


def pydantic_issues(exc: ValidationError, prefix: str = "",
                    model: type[BaseModel] | None = None) -> list[ConfigIssue]:
    """Turn pydantic's errors into ConfigIssues with field paths and rule ids; an unknown key of
    `model` (the one validated) says which known key it is closest to."""
    issues = []
    for err in exc.errors():
        path = _field_path(tuple(err["loc"]))
        path = f"{prefix}.{path}" if prefix else path
        if err["type"] == "extra_forbidden":
            loc = tuple(err["loc"])
            hint = did_you_mean(str(loc[-1]), known_keys(model, loc[:-1])) if model and loc else ""
            issues.append(ConfigIssue("C02", path, "unknown key" + hint))
        elif err["type"] == "missing":
            issues.append(ConfigIssue("C03", path, "required key is missing"))
        else:
            got = err.get("input")
            shown = repr(got) if not isinstance(got, dict | list) else type(got).__name__
            issues.append(ConfigIssue("C03", path, f"{err['msg']} (got {shown})"))
    return issues


def read_yaml(path: Path) -> dict[str, Any]:
    """The YAML mapping in `path`, or ConfigError C01 naming the line."""
    source = str(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(source, [ConfigIssue("C01", "(file)", f"cannot read: {exc.strerror}")]) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "(file)"
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(source, [ConfigIssue("C01", where, f"not valid YAML: {problem}")]) from None
    if not isinstance(data, dict):
        raise ConfigError(source, [ConfigIssue("C01", "(top level)", "expected a mapping of keys")])
    return data


def benchmark_from_path(path: Path) -> str | None:
    """'arcagi2' for variants/arcagi2/x.yaml (the folder right under variants/)."""
    parts = path.resolve().parts
    for i, part in enumerate(parts[:-2]):
        if part == "variants":
            return parts[i + 1]
    return None


def load_variant(path: str | os.PathLike[str], overrides: dict[str, Any] | None = None) -> Variant:
    """Read and validate a variant YAML with `overrides` set (seqk.config.overrides: dotted keys);
    schema only, `resolve` checks it against the benchmark."""
    from seqk.config.overrides import apply

    path = Path(path)
    data = apply(read_yaml(path), overrides or {}, str(path))
    from_path = benchmark_from_path(path)
    issues: list[ConfigIssue] = []
    if from_path and data.get("benchmark") not in (None, from_path):
        issues.append(ConfigIssue(
            "C04", "benchmark",
            f"{data['benchmark']!r} disagrees with the folder variants/{from_path}/"))
    data.setdefault("benchmark", from_path)
    try:
        variant = Variant.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(str(path), issues + pydantic_issues(exc, model=Variant)) from None
    if issues:
        raise ConfigError(str(path), issues)
    return variant
