"""One Harbor run: the command line, the process (with a timeout) and the files it leaves.

Harbor writes `<jobs dir>/<job name>/<trial>/result.json`, `agent/trajectory.json` and
`verifier/test-stdout.txt`; `read_trial` turns them into a `Trial`. A Harbor that crashes,
hangs or leaves no result raises AgentRunError: that is an error of the run, never a
wrong answer of the agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seqk.errors import AgentRunError

_STDERR_TAIL = 1500


def slug(name: str) -> str:
    """`name` as one safe path component."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name) or "terminalbench"


def executable(option: str) -> list[str]:
    """The Harbor command: the option split shell-style; 'auto' is `harbor` when it is on
    PATH, else `uvx harbor` (uv fetches it; Harbor needs Python >= 3.12)."""
    if option != "auto":
        return shlex.split(option)
    return ["harbor"] if shutil.which("harbor") else ["uvx", "harbor"]


@dataclass(frozen=True)
class Job:
    """Where one attempt's Harbor job lives."""

    folder: Path
    """The attempt's own folder: everything Harbor writes for it, and the private task copy."""
    name: str

    @property
    def jobs_dir(self) -> Path:
        """Harbor's -o."""
        return self.folder / "jobs"

    @property
    def job_dir(self) -> Path:
        """The folder Harbor makes for this job."""
        return self.jobs_dir / self.name


def command(harbor: list[str], job: Job, *, source: list[str], agent: str, model: str,
            environment: str, agent_kwargs: dict[str, Any], env_names: list[str]) -> list[str]:
    """The argument list (no shell). Secrets travel by name: `--ae NAME=${NAME}` is resolved
    by Harbor from the environment it inherits, so no value is on the command line."""
    cmd = [*harbor, "run", *source, "-l", "1", "-a", agent, "-m", model, "-e", environment,
           "-k", "1", "-n", "1", "-o", str(job.jobs_dir), "--job-name", job.name, "-q"]
    for key, value in agent_kwargs.items():
        cmd += ["--ak", f"{key}={value}"]
    for name in env_names:
        cmd += ["--ae", f"{name}=${{{name}}}"]
    return cmd


async def run(cmd: list[str], job: Job, *, timeout_s: float, extra_env: dict[str, str]) -> int:
    """Run Harbor to its end and return its exit code; its output goes to files of the job.

    Raises AgentRunError when it cannot start or outlives `timeout_s` (its whole process
    group is killed then: Harbor's own timeouts do not cover a hung Docker).
    """
    job.folder.mkdir(parents=True, exist_ok=True)
    with open(job.folder / "harbor.stdout.log", "wb") as out, open(job.folder / "harbor.stderr.log", "wb") as err:
        try:
            proc = await asyncio.create_subprocess_exec(
                *cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                env=os.environ | extra_env, start_new_session=True)
        except OSError as exc:
            raise AgentRunError(f"cannot start Harbor ({cmd[0]}): {exc}") from exc
        try:
            return await asyncio.wait_for(proc.wait(), timeout_s)
        except TimeoutError:
            raise AgentRunError(f"Harbor did not finish within {timeout_s:g} s; killed") from None
        finally:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                await proc.wait()


@dataclass
class Trial:
    """What Harbor's files say about one trial."""

    name: str
    reward: float | None
    exception_type: str | None
    exception_message: str | None
    input_tokens: int
    cached_tokens: int
    output_tokens: int
    rendered_prompt: str
    final_agent_message: str
    last_command: str
    last_output: str
    trajectory_full: str
    verifier_output: str
    steps: int


def read_trial(job: Job, returncode: int) -> Trial:
    """The job's trial (the first `*/result.json` in sorted order).

    Raises AgentRunError when there is none, whatever Harbor's exit code.
    """
    results = sorted(job.job_dir.glob("*/result.json")) if job.job_dir.is_dir() else []
    if not results:
        stderr = _text(job.folder / "harbor.stderr.log")[-_STDERR_TAIL:]
        raise AgentRunError(f"Harbor left no result.json (exit code {returncode}): {stderr}".rstrip(": "))
    folder = results[0].parent
    result = _json(results[0])
    trajectory = _json(folder / "agent" / "trajectory.json")
    steps = trajectory.get("steps") or []
    agent = result.get("agent_result") or {}
    exception = result.get("exception_info")
    exception = exception if isinstance(exception, dict) else {}
    rewards = ((result.get("verifier_result") or {}).get("rewards") or {})
    reward = rewards.get("reward")
    return Trial(
        name=str(result.get("trial_name") or folder.name),
        reward=float(reward) if isinstance(reward, int | float) and not isinstance(reward, bool) else None,
        exception_type=exception.get("exception_type"),
        exception_message=exception.get("exception_message"),
        input_tokens=int(agent.get("n_input_tokens") or 0),
        cached_tokens=int(agent.get("n_cache_tokens") or 0),
        output_tokens=int(agent.get("n_output_tokens") or 0),
        rendered_prompt=_first_message(steps, "user"),
        final_agent_message=_last_message(steps, "agent"),
        last_command=_last_command(steps),
        last_output=_last_output(steps),
        trajectory_full=_render(steps),
        verifier_output=_text(folder / "verifier" / "test-stdout.txt"),
        steps=len(steps),
    )


def _json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _text(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _messages(steps: list[dict[str, Any]], source: str) -> list[str]:
    return [str(s.get("message")) for s in steps if s.get("source") == source and s.get("message")]


def _first_message(steps: list[dict[str, Any]], source: str) -> str:
    found = _messages(steps, source)
    return found[0] if found else ""


def _last_message(steps: list[dict[str, Any]], source: str) -> str:
    found = _messages(steps, source)
    return found[-1] if found else ""


def _call_text(call: dict[str, Any]) -> str:
    arguments = call.get("arguments") or {}
    for key in ("keystrokes", "command", "cmd", "input"):
        if isinstance(arguments, dict) and arguments.get(key):
            return str(arguments[key])
    return str(call.get("function_name") or "")


def _outputs(step: dict[str, Any]) -> list[str]:
    results = (step.get("observation") or {}).get("results") or []
    return [str(r.get("content")) for r in results if isinstance(r, dict) and r.get("content")]


def _last_command(steps: list[dict[str, Any]]) -> str:
    calls = [c for s in steps for c in (s.get("tool_calls") or [])]
    return _call_text(calls[-1]).strip() if calls else ""


def _last_output(steps: list[dict[str, Any]]) -> str:
    for step in reversed(steps):
        if outputs := _outputs(step):
            return "\n\n".join(outputs)
    return ""


def _render(steps: list[dict[str, Any]]) -> str:
    lines: list[str] = []
    for step in steps:
        if step.get("source") in ("system", "user"):
            continue
        lines.append(f"--- Agent Step {step.get('step_id')} ---")
        if step.get("message"):
            lines.append(str(step["message"]))
        lines += [f"[Command] {_call_text(c)}" for c in step.get("tool_calls") or []]
        for output in _outputs(step):
            lines += ["[Output]", output]
    return "\n".join(lines) or "(no trajectory data)"
