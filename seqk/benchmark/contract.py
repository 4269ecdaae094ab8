"""The contract every benchmark fulfils: its tasks, verdicts, feedback modes and the base class.

A benchmark knows nothing about storage or scheduling. It loads tasks, judges an
output, and writes feedback; any LLM it needs is handed to it as a `RoleClient`
that the engine meters.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict


@dataclass(frozen=True)
class Task:
    """One task. `answer` is grading data: it never reaches the actor's prompt."""

    task_index: int
    task_id: str
    prompt: str
    answer: Any = None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def content_hash(self) -> str:
        """Same hash, same task: what resume checks against the stored task."""
        blob = json.dumps([self.task_id, self.prompt, self.answer], sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()


@dataclass(frozen=True)
class FeedbackMode:
    """A way to tell the actor how its last attempt went."""

    name: str
    description: str
    llm_critic: bool = False
    """True when this mode calls the critic model (the seed's LLM_CRITIC_MODES)."""
    shows_grading_info: bool = False
    """True when the feedback carries information derived from the grading data."""


@dataclass
class Verdict:
    """What the judge decided about one output."""

    success: bool
    score: float
    raw_eval_output: str = ""
    details: dict[str, Any] = field(default_factory=dict)


class RoleClient(Protocol):
    """An LLM role as a benchmark sees it; every call is metered and stored."""

    role: str
    model: str | None

    async def complete(self, prompt: str) -> str:
        """Send one user prompt and return the reply text."""
        ...


@dataclass
class HistoryItem:
    """A previous valid attempt of the same task, as the next seq@k prompt shows it."""

    attempt_index: int
    output: str
    feedback: str | None


@dataclass
class AttemptContext:
    """Everything an agentic `run_attempt` may need besides the task."""

    attempt_index: int
    k: int
    seq: bool
    history: list[HistoryItem]
    actor: RoleClient
    judge: RoleClient
    options: BaseModel
    run_id: str = ""
    """The run's id: agentic benchmarks keep each run's working files apart by it."""
    temperature: float | None = None
    """The actor's sampling temperature, for agents that call the model themselves."""


@dataclass
class AgentUsage:
    """Tokens an agent spent outside seqk's model door (inside Harbor, say); the engine
    stores them as one actor call of the attempt."""

    model: str
    input_tokens: int
    cached_tokens: int
    thinking_tokens: int
    output_tokens: int
    latency_s: float


@dataclass
class AttemptResult:
    """What an agentic `run_attempt` returns in place of actor call + verify."""

    prompt: str
    output: str
    verdict: Verdict
    usage: AgentUsage | None = None
    """The agent's own token counts, when it called its model itself."""


class NoOptions(BaseModel):
    """A benchmark without options."""

    model_config = ConfigDict(extra="forbid")


class _PromptRecorder:
    """A judge that writes down each prompt it is sent and answers none."""

    role = "judge"
    model: str | None = "(recorder)"

    def __init__(self) -> None:
        self.prompts: list[str] = []

    async def complete(self, prompt: str) -> str:
        """Record the prompt; raise instead of answering."""
        self.prompts.append(prompt)
        raise LookupError("the prompt recorder answers nothing")


class Benchmark(ABC):
    """Base class of a benchmark: the roles and names of the seed's contract."""

    name: ClassVar[str]
    verifier: ClassVar[str]
    """'llm' when an LLM judges; otherwise the fixed name of the verifier ('deterministic')."""
    feedback_modes: ClassVar[Sequence[FeedbackMode]]
    default_feedback_mode: ClassVar[str]
    prompt_version: ClassVar[str] = "1"
    """Bump when a prompt or judge template changes: it is part of the run fingerprint."""
    Options: ClassVar[type[BaseModel]] = NoOptions
    identity_exempt_options: ClassVar[frozenset[str]] = frozenset()
    """Options that do not change results (a path to the same data) and stay out of the fingerprint."""
    soft_score_clipped: ClassVar[bool] = False
    """True when the benchmark's own harness clips the mean score to [0, 1] rather than each
    score (HealthBench): verify() returns the unclipped score, and the run's soft score is
    the mean of the tasks' best scores, then clipped."""

    @property
    def llm_critic_modes(self) -> set[str]:
        """The feedback modes that invoke an LLM critic."""
        return {m.name for m in self.feedback_modes if m.llm_critic}

    def feedback_mode(self, name: str) -> FeedbackMode:
        """The mode called `name` (KeyError if the benchmark has none)."""
        for mode in self.feedback_modes:
            if mode.name == name:
                return mode
        raise KeyError(name)

    @abstractmethod
    def slice_name(self, options: BaseModel) -> str:
        """The run path's first slot: benchmark plus data set variant."""

    @abstractmethod
    def load_tasks(self, options: BaseModel) -> list[Task]:
        """Every task of the slice, in canonical order, task_index from 1."""

    def data_fingerprint(self, options: BaseModel) -> str | None:
        """A hash of the data file the tasks come from, when the code does not fix it (a local
        file, a hub download). It joins the run's fingerprint, so two data sets never mix in
        one run. None: the tasks are fixed by the benchmark's code and options."""
        return None

    @abstractmethod
    async def verify(self, task: Task, output: str, judge: RoleClient) -> Verdict:
        """Judge one output. Raise seqk.errors.JudgeError when no verdict can be reached."""

    @abstractmethod
    async def feedback(self, task: Task, output: str, verdict: Verdict, mode: FeedbackMode,
                       critic: RoleClient) -> str:
        """The feedback the next seq@k attempt will read after this failed attempt, in `mode`
        (one of `feedback_modes`, resolved once by the run)."""

    async def judge_prompts(self, task: Task) -> list[str]:
        """The judge prompts one attempt at `task` sends, with an empty answer in place of the
        output: a budget reserves their worst-case cost before the attempt starts (it bounds the
        answer's size apart). By default, the prompts `verify` sends for an empty answer, recorded
        without calling any model; override when later judge calls depend on earlier replies.
        [] for a verifier that is not an LLM."""
        if self.verifier != "llm":
            return []
        recorder = _PromptRecorder()
        # The recorder answers nothing, so verify ends in an error once it has asked.
        with contextlib.suppress(Exception):
            await self.verify(task, "", recorder)
        return recorder.prompts

    async def critic_prompts(self, task: Task, mode: FeedbackMode) -> list[str]:
        """The critic prompts `feedback` sends in `mode` for an empty answer and an empty
        judge's report (a budget bounds both apart), recorded without calling any model."""
        if not mode.llm_critic:
            return []
        recorder = _PromptRecorder()
        with contextlib.suppress(Exception):
            await self.feedback(task, "", Verdict(False, 0.0), mode, recorder)
        return recorder.prompts

    run_attempt: Any = None
    """Agentic benchmarks set this to `async def run_attempt(task, prompt, ctx) -> AttemptResult`;
    the engine then calls it in place of the actor call and `verify`."""
