"""Terminal-Bench 2 through the Harbor CLI: every attempt is one Harbor run, in Docker, of an
agent (terminus-2 by default) on one task; Harbor's verifier decides (reward 1.0 passes).

seq@k context (the "This is attempt t of K." note, earlier final messages and the feedback
of the chosen mode, nothing else) reaches the agent in the task's own instruction: the task
package is copied into the attempt's folder, its instruction.md extended there, and Harbor
runs that copy (`-p`). Harbor's shared task cache is read, never written.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from seqk.benchmark import (
    AgentContext,
    AgenticBenchmark,
    AgentUsage,
    AttemptContext,
    AttemptResult,
    FeedbackMode,
    Task,
    Verdict,
)
from seqk.errors import AgentRunError

from . import harbor, text

TASKS: tuple[str, ...] = (
    "build-cython-ext", "cancel-async-tasks", "cobol-modernization", "kv-store-grpc",
    "merge-diff-arc-agi-task", "schemelike-metacircular-eval", "torch-tensor-parallelism",
    "configure-git-webserver", "mailman", "nginx-request-logging", "openssl-selfsigned-cert",
    "filter-js-from-html", "fix-code-vulnerability", "sanitize-git-repo", "dna-insert",
    "largest-eigenval", "modernize-scientific-stack", "multi-source-data-merger", "query-optimize",
    "raman-fitting", "reshard-c4-data", "sparql-university", "llm-inference-batching-scheduler",
    "pytorch-model-recovery",
)
"""seq_k's curated Terminal-Bench 2 subset; a task's canonical index is its place here."""
DEFAULT_AGENT = "terminus-2"
DEFAULT_DATASET = "terminal-bench/terminal-bench-2"


class TerminalBenchOptions(BaseModel):
    """Which tasks, which agent, and how Harbor is run."""

    model_config = ConfigDict(extra="forbid")

    tasks: list[str] | None = None
    """Task names to run (a list or a comma-separated string), in the order given; default all 24.
    Canonical indices stay those of the full list."""
    agent: str = DEFAULT_AGENT
    """Harbor agent: terminus-2 or codex (others are passed through)."""
    environment: str = "docker"
    """Harbor environment (-e)."""
    dataset: str = DEFAULT_DATASET
    """Harbor dataset (-d); its namespace also locates the task cache."""
    max_agent_steps: int | None = Field(100, gt=0)
    """terminus-2's max_turns; null leaves terminus-2's own cap."""
    harbor_executable: str = "auto"
    """The Harbor command, split shell-style ('harbor', 'uvx harbor', a path); auto: `harbor`
    on PATH, else `uvx harbor`."""
    harbor_timeout_s: float = Field(7200.0, gt=0)
    """Seconds one Harbor run may take before it is killed and recorded as an error."""
    pass_env: list[str] = Field(default_factory=lambda: ["OPENAI_API_KEY"])
    """Names of host variables handed to the agent (`--ae NAME=${NAME}`); never values."""
    codex_auth_json: str = "~/.codex/auth.json"
    """codex only: the auth file, passed by path."""
    jobs_root: str = "runs/harbor_jobs"
    """Where attempts' folders go: <jobs_root>/<run id>/<task>/attempt-<t>."""
    task_packages: str | None = None
    """A folder of Terminal-Bench 2 task packages (<folder>/<task>/instruction.md) to copy for
    seq@k; default: Harbor's cache (harbor_cache)."""
    harbor_cache: str = "~/.cache/harbor/tasks/packages"
    """Harbor's task package cache, read (never written) to find a task package."""
    local_tasks: str | None = None
    """A folder of task packages in Harbor's format (<folder>/<name>/instruction.md, task.toml,
    environment/, tests/) run instead of Terminal-Bench 2: its subfolders, sorted, are the tasks
    (`tasks` may pick some), and every attempt runs the package (`-p`); `dataset`,
    `task_packages` and `harbor_cache` are not used. E.g. benchmarks/terminalbench/local_tasks."""

    @field_validator("tasks", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [name.strip() for name in value.split(",") if name.strip()]
        return value

    @model_validator(mode="after")
    def _known(self) -> TerminalBenchOptions:
        known = local_task_names(self.local_tasks) if self.local_tasks is not None else TASKS
        if not known:
            raise ValueError(f"local_tasks: no task package (<name>/instruction.md) in {self.local_tasks}")
        unknown = [name for name in self.tasks or [] if name not in known]
        if unknown:
            raise ValueError(f"unknown task(s) {', '.join(unknown)}; known: {', '.join(known)}")
        return self


def local_task_names(folder: str) -> tuple[str, ...]:
    """The task packages in `folder`, sorted: a task's canonical index is its place here."""
    root = Path(folder).expanduser()
    return tuple(sorted(p.parent.name for p in root.glob("*/instruction.md"))) if root.is_dir() else ()


class TerminalBench(AgenticBenchmark[TerminalBenchOptions]):
    """Terminal-Bench 2 tasks run by an agent inside Harbor."""

    name: ClassVar[str] = "terminalbench"
    verifier: ClassVar[str] = "harbor"
    feedback_modes: ClassVar[tuple[FeedbackMode, ...]] = (
        FeedbackMode("binary", "Only that the attempt did not pass the task's tests."),
        FeedbackMode("raw", "The end of the verifier's pytest output: test names and assertions.",
                     shows_grading_info=True),
        FeedbackMode("retry_diagnostics", "Verifier output, the last command and its output, "
                     "failure lines and a checklist.", shows_grading_info=True),
    )
    identity_exempt_options: ClassVar[frozenset[str]] = frozenset({
        "harbor_executable", "harbor_timeout_s", "pass_env", "codex_auth_json", "jobs_root",
        "task_packages", "harbor_cache", "local_tasks"})

    def slice_name(self, options: TerminalBenchOptions) -> str:
        """'terminalbench', plus the agent and the dataset when they are not the defaults, so
        that codex and terminus-2 runs of one model never share a run."""
        parts = [self.name]
        if options.local_tasks is not None:
            # The folder's name, not its path: the tasks' content hashes tell two folders apart.
            parts.append("local-" + harbor.slug(Path(options.local_tasks).expanduser().resolve().name))
        if options.agent != DEFAULT_AGENT:
            parts.append(harbor.slug(options.agent))
        if options.dataset != DEFAULT_DATASET and options.local_tasks is None:
            parts.append(harbor.slug(options.dataset))
        return "-".join(parts)

    def load_tasks(self, options: TerminalBenchOptions) -> list[Task]:
        """The chosen tasks with their canonical index in the full list of 24."""
        if options.local_tasks is not None:
            names = local_task_names(options.local_tasks)
            root = Path(options.local_tasks).expanduser()
            return [Task(task_index=names.index(name) + 1, task_id=name,
                         prompt=(root / name / "instruction.md").read_text(),
                         meta={"dataset": "local", "agent": options.agent})
                    for name in (options.tasks or names)]
        return [Task(task_index=TASKS.index(name) + 1, task_id=name,
                     prompt=f"Terminal-Bench 2 task {name}: Harbor gives the agent the task's "
                            "instruction.md inside the task's container.",
                     meta={"dataset": options.dataset, "agent": options.agent})
                for name in (options.tasks or TASKS)]

    async def feedback(self, task: Task, output: str, verdict: Verdict,
                       ctx: AttemptContext[TerminalBenchOptions]) -> str:
        """The chosen mode's text; it is all the next attempt is told about this one."""
        if ctx.mode.name == "binary":
            return text.BINARY
        if ctx.mode.name == "raw":
            return text.tail(verdict.raw_eval_output) or "reward=0.0"
        return text.retry_diagnostics(verdict.details, verdict.raw_eval_output)

    async def run_attempt(self, task: Task, prompt: str, ctx: AgentContext[TerminalBenchOptions]) -> AttemptResult:
        """One Harbor run of the agent on `task`, read back into a verdict and token counts.

        Raises AgentRunError when Harbor fails, hangs, leaves no result or no reward, or when
        seq@k context cannot be delivered (no task package to copy).
        """
        opts = ctx.options
        if ctx.actor.model is None:
            raise AgentRunError("terminalbench needs an actor model")
        job = harbor.Job(Path(opts.jobs_root) / ctx.run_id / harbor.slug(task.task_id)
                         / f"attempt-{ctx.attempt_index}",
                         f"{harbor.slug(task.task_id)}-attempt-{ctx.attempt_index}")
        shutil.rmtree(job.folder, ignore_errors=True)  # a retried error starts clean
        job.folder.mkdir(parents=True)
        original, source, delivered = "", ["-d", opts.dataset, "-i", f"terminal-bench/{task.task_id}"], ""
        if opts.local_tasks is not None:
            source = ["-p", str((Path(opts.local_tasks).expanduser() / task.task_id).resolve())]
        if ctx.seq:
            context = ctx.retry_context
            package = _private_copy(opts, task.task_id, job.folder / "task")
            original = (package / "instruction.md").read_text()
            delivered = text.with_context(original, context)
            (package / "instruction.md").write_text(delivered)
            source = ["-p", str(package)]
        env_names, extra_env = _secrets(opts)
        cmd = harbor.command(harbor.executable(opts.harbor_executable), job, source=source, agent=opts.agent,
                             model=ctx.actor.model, environment=opts.environment,
                             agent_kwargs=_agent_kwargs(opts, ctx.temperature), env_names=env_names)
        started = time.perf_counter()
        returncode = await harbor.run(cmd, job, timeout_s=opts.harbor_timeout_s, extra_env=extra_env)
        trial = harbor.read_trial(job, returncode)
        elapsed = time.perf_counter() - started
        if trial.reward is None:
            cause = ": ".join(filter(None, [trial.exception_type, trial.exception_message])) or "no exception"
            raise AgentRunError(f"Harbor trial {trial.name} has no reward ({cause}); tokens spent: "
                                f"{trial.input_tokens} in, {trial.output_tokens} out")
        names = opts.pass_env
        success = trial.reward >= 1.0
        verifier_output = text.redact(trial.verifier_output, names)
        last_output = text.redact(trial.last_output, names)
        usage = AgentUsage(ctx.actor.model, trial.input_tokens, trial.cached_tokens, 0, trial.output_tokens,
                           elapsed)
        details = {
            "reward": trial.reward, "success": success, "trial_name": trial.name, "task_id": task.task_id,
            "last_command": trial.last_command, "last_output": last_output,
            "error_signals": text.error_signals(verifier_output, last_output),
            "verifier_output": verifier_output, "trajectory_full": text.redact(trial.trajectory_full, names),
            "exception_type": trial.exception_type, "exception_message": trial.exception_message,
            "actor_token_usage": {"input_tokens": trial.input_tokens, "cached_tokens": trial.cached_tokens,
                                  "thinking_tokens": 0, "output_tokens": trial.output_tokens},
            "task_instruction": text.redact(original, names),
            "delivered_instruction": text.redact(delivered, names),
            "harbor_command": cmd, "harbor_returncode": returncode, "steps": trial.steps,
        }
        rendered = text.redact(trial.rendered_prompt, names)
        output = text.redact(trial.final_agent_message or trial.trajectory_full, names)
        return AttemptResult(prompt=rendered or details["delivered_instruction"] or prompt, output=output,
                             verdict=Verdict(success, float(success), "" if success else verifier_output, details),
                             usage=usage)


def _agent_kwargs(opts: TerminalBenchOptions, temperature: float | None) -> dict[str, Any]:
    if opts.agent != DEFAULT_AGENT:
        return {}
    kwargs: dict[str, Any] = {}
    if opts.max_agent_steps is not None:
        kwargs["max_turns"] = opts.max_agent_steps
    if temperature is not None:
        kwargs["temperature"] = temperature
    return kwargs


def _secrets(opts: TerminalBenchOptions) -> tuple[list[str], dict[str, str]]:
    """(names handed to the agent, variables added to Harbor's environment)."""
    if opts.agent == "codex":
        extra = {"CODEX_AUTH_JSON_PATH": str(Path(opts.codex_auth_json).expanduser()),
                 "CODEX_FORCE_AUTH_JSON": "1"}
        return list(extra), extra
    return [name for name in opts.pass_env if name in os.environ], {}


def _private_copy(opts: TerminalBenchOptions, task_id: str, into: Path) -> Path:
    """A copy of the task's package under `into`, to be edited there.

    Raises AgentRunError when no package is found: the context would otherwise be lost.
    """
    source = _package(opts, task_id)
    if source is None:
        where = opts.task_packages or opts.harbor_cache
        raise AgentRunError(
            f"no task package for {task_id} under {where}: seq@k needs one to give the agent its "
            "context. Run Harbor once on the dataset (e.g. the pass@k variant) to fill its cache, "
            "or set options.task_packages to a Terminal-Bench 2 checkout.")
    target = into / task_id
    shutil.copytree(source, target, symlinks=True)
    return target


def _package(opts: TerminalBenchOptions, task_id: str) -> Path | None:
    if opts.task_packages is not None or opts.local_tasks is not None:
        folder = Path(opts.local_tasks or opts.task_packages or "").expanduser() / task_id
        return folder if (folder / "instruction.md").is_file() else None
    namespace = opts.dataset.split("/", 1)[0] if "/" in opts.dataset else "terminal-bench"
    root = Path(opts.harbor_cache).expanduser() / namespace / task_id
    found = [p.parent for p in root.glob("*/instruction.md")]
    # The newest package is the one Harbor fetched last, the one its own runs use.
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


benchmark = TerminalBench()
