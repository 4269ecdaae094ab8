"""A study file (`seqk study study.yaml`), validated whole and resolved against its two arms.

    arms:
      seq: seqk.yaml            # variant paths, relative to this file
      partner: passk.yaml
    question: lift              # or equal_budget (+ budget_usd_per_task)
    alpha: 0.05
    margin: 0.0
    budget_usd: 10
    seed: 1

Problems are reported as for a variant (seqk.config.variant's rule ids: C01 the file, C02 an
unknown key, C03 a wrong value, C11 / C12 a budget that cannot be held), every one at once, naming
the study file; an arm's own problems name the arm's variant file.

A study's identity (`study_id`) is its arms' run ids, question, alpha, margin, seed and budget per
task: what its confidence sequence and its task order depend on. Its budget cap and its window
are not: raising the cap lets a study that stopped on it go on. The task order is the arms'
shared tasks sorted by sha256("<seed>:<task_index>"): a seeded permutation that no library
version can change.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from seqk.config import spec as runspec
from seqk.config.identity import canonical_json
from seqk.config.spec import RunSettings, RunSpec
from seqk.config.variant import pydantic_issues, read_yaml
from seqk.errors import ConfigError, ConfigIssue
from seqk.models import known_price

WINDOW_PER_CONCURRENCY = 2
"""The default window: this many times the arms' larger `concurrency`, so that every task slot
is busy while the window's slowest chains finish."""


class StudyArms(BaseModel):
    """The two runs a study compares, as variant files."""

    model_config = ConfigDict(extra="forbid")

    seq: str
    """The seq@k variant (a path relative to the study file)."""
    partner: str
    """The variant it is compared with: its pass@k partner, a seq@k variant with
    `feedback_mode: none`, or any variant of the same benchmark slice."""


class StudyFile(BaseModel):
    """One study file = one study."""

    model_config = ConfigDict(extra="forbid")

    arms: StudyArms
    """The two arms (`seq`, `partner`)."""
    question: Literal["lift", "equal_budget"] = "lift"
    """`lift`: the paired difference seq@K - partner@K (K the seq arm's k); `equal_budget`: the
    best seq@k (width x depth) cell against the partner's cell at `budget_usd_per_task`."""
    alpha: float = Field(0.05, gt=0, lt=1)
    """The confidence sequence holds the true difference at every look with probability 1 - alpha."""
    margin: float = Field(0.0, ge=0, lt=1)
    """No practical difference inside ± margin: the study also stops when the sequence lies
    inside it (0: never)."""
    budget_usd: float | None = Field(None, gt=0)
    """Most the study may spend over both arms, in US dollars (may be raised later)."""
    budget_usd_per_task: float | None = Field(None, gt=0)
    """equal_budget: the spend per task at which the two arms are compared."""
    seed: int = 1
    """The task order: tasks sorted by sha256("<seed>:<task_index>")."""
    window: int | None = Field(None, gt=0)
    """Tasks run together in both arms before the sequence is updated (default: twice the arms'
    larger concurrency)."""


Cell = tuple[int, int]
"""(width, depth): a seq@k arm's `width` chains of `depth` attempts; a pass@k arm's pass@width
is (width, 1)."""


@dataclass(frozen=True)
class StudySpec:
    """A study resolved against its arms: their runs, the shared tasks in order, the question."""

    study_id: str
    source: str
    seq: RunSpec
    partner: RunSpec
    settings: RunSettings
    """The seq arm's invocation settings (its `db:` names the study's database)."""
    partner_settings: RunSettings
    """The partner's (where its export goes)."""
    question: str
    alpha: float
    margin: float
    budget_usd: float | None
    budget_usd_per_task: float | None
    seed: int
    order: list[int]
    """The shared task indices in the order they run."""
    window: int
    declaration: dict[str, Any] = field(default_factory=dict)
    """The study file as resolved, stored with the study."""

    def lift_cells(self) -> dict[str, Cell]:
        """The cells of the lift question: seq@K against the partner's value at K (pass@K, or a
        seq@k partner's seq@K), K the seq arm's k."""
        k = self.seq.k
        return {"seq": (1, k), "partner": (k, 1) if not self.partner.seq else (1, k)}


def is_study_file(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is a study file (a YAML mapping with `arms:`) rather than a variant."""
    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError):
        return False
    return isinstance(data, dict) and "arms" in data


def order_of(task_indices: list[int], seed: int) -> list[int]:
    """The study's task order: the tasks sorted by sha256("<seed>:<task_index>")."""
    return sorted(task_indices, key=lambda i: hashlib.sha256(f"{seed}:{i}".encode()).hexdigest())


def load(path: str | os.PathLike[str], overrides: dict[str, Any] | None = None) -> StudySpec:
    """Read, validate and resolve a study file and both of its arms' variants."""
    path = Path(path)
    source = str(path)
    data = read_yaml(path)
    data.update(overrides or {})
    try:
        study = StudyFile.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(source, pydantic_issues(exc)) from None
    issues: list[ConfigIssue] = []
    arms = {}
    for arm in ("seq", "partner"):
        arm_path = path.parent / getattr(study.arms, arm)
        if not arm_path.is_file():
            issues.append(ConfigIssue("C01", f"arms.{arm}", f"no variant file at {arm_path}"))
        else:
            arms[arm] = runspec.load_with_settings(arm_path)
    if issues:
        raise ConfigError(source, issues)
    (seq, settings), (partner, partner_settings) = arms["seq"], arms["partner"]
    issues += _arm_issues(study, seq, partner)
    shared = _shared_tasks(seq, partner)
    if not shared and not issues:
        issues.append(ConfigIssue("C03", "arms", "the two arms share no task (same index and content)"))
    if issues:
        raise ConfigError(source, issues)
    identity = {"seq_run_id": seq.run_id, "partner_run_id": partner.run_id, "question": study.question,
                "alpha": study.alpha, "margin": study.margin, "seed": study.seed,
                "budget_usd_per_task": study.budget_usd_per_task}
    study_id = hashlib.sha256(canonical_json(identity).encode()).hexdigest()[:16]
    window = study.window or WINDOW_PER_CONCURRENCY * max(seq.concurrency, partner.concurrency)
    declaration = study.model_dump(mode="json") | {"source": source, "window": window}
    return StudySpec(study_id, source, seq, partner, settings, partner_settings, study.question, study.alpha,
                     study.margin, study.budget_usd, study.budget_usd_per_task, study.seed,
                     order_of(shared, study.seed), window, declaration)


def _arm_issues(study: StudyFile, seq: RunSpec, partner: RunSpec) -> list[ConfigIssue]:
    issues = []
    if not seq.seq:
        issues.append(ConfigIssue("C03", "arms.seq", f"{seq.source} is a pass@k variant; the seq arm "
                                  "is a seq@k variant"))
    if seq.run_id == partner.run_id:
        issues.append(ConfigIssue("C03", "arms.partner", "both arms are the same run"))
    if (seq.benchmark.name, seq.slice_name) != (partner.benchmark.name, partner.slice_name):
        issues.append(ConfigIssue("C03", "arms.partner", (
            f"the arms are different benchmark slices ({seq.slice_name} and {partner.slice_name}): a "
            "paired difference needs the same tasks")))
    if study.question == "lift" and partner.k < seq.k:
        issues.append(ConfigIssue("C03", "arms.partner", (
            f"the partner has k={partner.k}, below the seq arm's k={seq.k}: its value at K={seq.k} "
            "is not defined")))
    if study.question == "equal_budget" and study.budget_usd_per_task is None:
        issues.append(ConfigIssue("C03", "budget_usd_per_task", "question: equal_budget needs the "
                                  "budget per task the arms are compared at"))
    if study.question == "lift" and study.budget_usd_per_task is not None:
        issues.append(ConfigIssue("C03", "budget_usd_per_task", "only for question: equal_budget"))
    for arm, spec in (("seq", seq), ("partner", partner)):
        if spec.executor != "local" or spec.batched:
            issues.append(ConfigIssue("C03", f"arms.{arm}", (
                f"{spec.source} runs with {'executor: ray' if spec.executor != 'local' else 'batch'}; a "
                "study runs its arms a window at a time, from this process, with synchronous calls")))
        called = [spec.actor, spec.judge, spec.critic if spec.seq else None]
        budgeted = study.budget_usd if study.budget_usd is not None else study.budget_usd_per_task
        issues += [ConfigIssue(i.rule, f"arms.{arm}: {i.field}", i.message)
                   for i in runspec.unpriced_roles(called, budgeted)]
        if study.budget_usd is not None:
            issues += [ConfigIssue(i.rule, f"arms.{arm}: {i.field}", i.message)
                       for i in runspec.uncapped_roles(called, study.budget_usd)]
    return issues


def _shared_tasks(seq: RunSpec, partner: RunSpec) -> list[int]:
    """The task indices both arms select, with the same content."""
    theirs = {t.task_index: t.content_hash for t in partner.tasks}
    return [t.task_index for t in seq.tasks if theirs.get(t.task_index) == t.content_hash]


def priced(spec: RunSpec) -> bool:
    """Whether every role of the run that makes calls has a known price."""
    roles = [spec.actor, spec.judge, spec.critic if spec.seq else None]
    return all(known_price(r.model, r.price, r.api_base) is not None
               for r in roles if r is not None and r.model is not None)
