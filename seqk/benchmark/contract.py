"""The contract every benchmark fulfils: its tasks, verdicts, feedback modes and the base classes.

A benchmark knows nothing about storage or scheduling. It loads tasks, judges an output and
writes feedback; what it needs besides the task (its own options, typed; the attempt's place;
the judge and critic, as `RoleClient`s the engine meters) arrives in an `AttemptContext`.
An agent harness that makes the actor's calls itself is an `AgenticBenchmark`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, ClassVar, Generic, Protocol, TypeVar, get_args, get_origin

from pydantic import BaseModel, ConfigDict, TypeAdapter

from seqk.records import Usage

OptionsT = TypeVar("OptionsT", bound=BaseModel)
T = TypeVar("T")


@cache
def _adapter(kind: Any) -> TypeAdapter[Any]:
    return TypeAdapter(kind)


def _hashed_json() -> Callable[[Any], str]:
    """json.dumps(value, sort_keys=True, default=str), character for character, without the
    encoder json.dumps builds for each call: the C encoder it builds, built once (half the time
    of hashing 100,000 tasks, which a data set's run does at every start). It skips the check
    for circular data (an answer holding itself fails with RecursionError, not ValueError).
    Where there is no such C encoder, or it takes other arguments, JSONEncoder.encode."""
    slow = json.JSONEncoder(sort_keys=True, default=str).encode
    make: Any = getattr(json.encoder, "c_make_encoder", None)
    try:  # markers, default, encoder, indent, separators, sort_keys, skipkeys, allow_nan
        c_encoder = make(None, str, json.encoder.encode_basestring_ascii, None, ": ", ", ", True, False, True)
    except TypeError:
        return slow

    def fast(value: Any) -> str:
        return "".join(c_encoder(value, 0))

    probe = ["t\u00e9\u2028", "p", {"target": ["1"], "b": [1.5, float("nan"), None, True], "a": {"x": object}}]
    return fast if fast(probe) == slow(probe) else slow


_HASHED_JSON = _hashed_json()


@dataclass(frozen=True)
class Task:
    """One task. `answer` is grading data: it never reaches the actor's prompt. It is plain
    JSON data or a pydantic model; read it back typed with `answer_as`."""

    task_index: int
    task_id: str
    prompt: str
    answer: Any = None
    meta: dict[str, Any] = field(default_factory=dict)
    """Descriptive data stored with the task (the `tasks` table); never settings a verifier reads."""
    hash_extra: Mapping[str, Any] | None = None
    """Keys merged into `answer` for `content_hash` only, never read by a verifier: data that
    sat in the answer before contract v2 (healthbench's pass rule), kept in the hash so runs
    made then still resume."""

    @property
    def content_hash(self) -> str:
        """Same hash, same task: what resume checks against the stored task."""
        answer = self.answer.model_dump(mode="json") if isinstance(self.answer, BaseModel) else self.answer
        if self.hash_extra:
            answer = {**answer, **self.hash_extra}
        blob = _HASHED_JSON([self.task_id, self.prompt, answer])
        return hashlib.sha256(blob.encode()).hexdigest()

    def answer_as(self, kind: type[T]) -> T:
        """The answer as `kind` (a pydantic model, a dataclass, `list[Grid]`...): returned as is
        when it already is one, else validated (pydantic's ValidationError when it does not fit)."""
        with contextlib.suppress(TypeError):  # a generic alias (list[int]) is no class
            if isinstance(self.answer, kind):
                return self.answer
        adapter: TypeAdapter[T] = _adapter(kind)  # type: ignore[arg-type]
        return adapter.validate_python(self.answer)


@dataclass(frozen=True)
class FeedbackMode:
    """A way to tell the actor how its last attempt went."""

    name: str
    description: str
    llm_critic: bool = False
    """True when this mode calls the critic model (the seed's LLM_CRITIC_MODES)."""
    shows_grading_info: bool = False
    """True when the feedback carries information derived from the grading data."""
    shows_history: bool = True
    """False for `none`: later attempts see their framing and nothing of the earlier ones, and
    no feedback is written (no critic call)."""


NONE = FeedbackMode("none", "Nothing: a later attempt sees the task and its framing only, not "
                    "the earlier attempts (resampling until success).", shows_history=False)
"""The feedback mode every benchmark has besides its own: seq@k's stopping rule without feedback."""


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


@dataclass(frozen=True, kw_only=True)
class AttemptContext(Generic[OptionsT]):
    """What `verify` and `feedback` get besides the task and the output: the run's options
    (the benchmark's own type), the attempt's place, and the LLM roles, metered."""

    options: OptionsT
    """The variant's `options:`, validated into the benchmark's `Options`."""
    judge: RoleClient
    """The judge role (its model is None for a verifier that is not an LLM)."""
    critic: RoleClient
    """The critic role, for feedback modes with `llm_critic`."""
    mode: FeedbackMode
    """The run's feedback mode, resolved once: the one `feedback` writes in."""
    attempt_index: int = 1
    """1-based place of this attempt among the task's k."""
    k: int = 1
    """Attempts per task in this run."""
    seq: bool = False
    """True for seq@k (attempts in order, feedback between them), False for pass@k."""
    history: list[HistoryItem] = field(default_factory=list)
    """The earlier valid attempts of this task the actor's prompt shows (seq@k only)."""
    run_id: str = ""
    """The run's id: agentic benchmarks keep each run's working files apart by it."""


@dataclass(frozen=True, kw_only=True)
class AgentContext(AttemptContext[OptionsT]):
    """What an agentic `run_attempt` gets: the attempt's context plus the actor itself."""

    actor: RoleClient
    """The actor role; an agent that calls its model itself reads the model id from it."""
    temperature: float | None = None
    """The actor's sampling temperature, for agents that call the model themselves."""
    retry_context: str = ""
    """seq@k: what the variant's retry protocol puts after the task (the framing, the earlier
    attempts and their feedback), for a harness that delivers the task's own instruction."""


@dataclass(kw_only=True)
class AgentUsage(Usage):
    """Tokens an agent spent outside seqk's model door (inside Harbor, say); the engine
    stores them as one actor call of the attempt, priced like any other."""

    model: str
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
    """A judge or critic that writes down each prompt it is sent and answers none."""

    model: str | None = "(recorder)"

    def __init__(self, role: str) -> None:
        self.role = role
        self.prompts: list[str] = []

    async def complete(self, prompt: str) -> str:
        """Record the prompt; raise instead of answering."""
        self.prompts.append(prompt)
        raise LookupError("the prompt recorder answers nothing")


BINARY = FeedbackMode("binary", "Only that the answer was wrong.")
"""The feedback mode a benchmark has when it declares none."""


def _options_type(cls: type) -> type[BaseModel] | None:
    """The options model named in `class X(Benchmark[XOptions])`, if any."""
    for base in getattr(cls, "__orig_bases__", ()):
        origin, args = get_origin(base), get_args(base)
        if (isinstance(origin, type) and issubclass(origin, Benchmark) and args
                and isinstance(args[0], type) and issubclass(args[0], BaseModel)):
            return args[0]
    return None


class Benchmark(ABC, Generic[OptionsT]):
    """Base class of a benchmark, generic over its options model:
    `class Arc(Benchmark[ArcOptions])` makes `Options` ArcOptions, and every method gets it typed.

    A subclass must set `name` and define `load_tasks` and `verify`; everything else has a
    default: one `binary` feedback mode, the slice named after the benchmark, no options,
    a deterministic verifier."""

    name: ClassVar[str]
    verifier: ClassVar[str] = "deterministic"
    """'llm' when an LLM judges (the variant's judge_model is then used); otherwise the fixed
    name of the verifier ('deterministic', 'sandbox')."""
    feedback_modes: ClassVar[Sequence[FeedbackMode]] = (BINARY,)
    default_feedback_mode: ClassVar[str] = "binary"
    """Default: the first of `feedback_modes`."""
    binary_feedback: ClassVar[str] = "Your previous answer was not correct."
    """What the default `feedback` says in the `binary` mode: only that the attempt failed."""
    prompt_version: ClassVar[str] = "1"
    """Bump when a prompt or judge template changes: it is part of the run fingerprint."""
    Options: ClassVar[type[BaseModel]] = NoOptions
    """The options model; taken from `Benchmark[XOptions]` when not set."""
    identity_exempt_options: ClassVar[frozenset[str]] = frozenset()
    """Options that do not change results (a path to the same data) and stay out of the fingerprint."""
    soft_score_clipped: ClassVar[bool] = False
    """True when the benchmark's own harness clips the mean score to [0, 1] rather than each
    score (HealthBench): verify() returns the unclipped score, and the run's soft score is
    the mean of the tasks' best scores, then clipped."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        declared = _options_type(cls)
        if declared is not None:
            if "Options" in vars(cls) and cls.Options is not declared:
                raise TypeError(f"{cls.__name__}: Options is {cls.Options.__name__} but the class "
                                f"is declared Benchmark[{declared.__name__}]")
            cls.Options = declared
        if any(mode.name == NONE.name for mode in cls.feedback_modes):
            raise TypeError(f"{cls.__name__}: the feedback mode name 'none' is seqk's own (every "
                            "benchmark has it): give the mode another name")
        if "feedback_modes" in vars(cls) and "default_feedback_mode" not in vars(cls) and cls.feedback_modes:
            cls.default_feedback_mode = cls.feedback_modes[0].name

    @property
    def llm_critic_modes(self) -> set[str]:
        """The feedback modes that invoke an LLM critic."""
        return {m.name for m in self.feedback_modes if m.llm_critic}

    def feedback_mode(self, name: str) -> FeedbackMode:
        """The mode called `name`, one of `feedback_modes` or `none` (KeyError if neither)."""
        for mode in self.feedback_modes:
            if mode.name == name:
                return mode
        if name == NONE.name:
            return NONE
        raise KeyError(name)

    def slice_name(self, options: OptionsT) -> str:
        """The run path's first slot: benchmark plus data set variant (default: the name)."""
        return self.name

    def verifier_of(self, options: OptionsT) -> str:
        """The verifier these options grade with: `verifier`, unless the options choose it (a
        `dataset` benchmark's `scorer:`); 'llm' makes the variant's judge model grade."""
        return self.verifier

    @abstractmethod
    def load_tasks(self, options: OptionsT) -> list[Task]:
        """Every task of the slice, in canonical order, task_index from 1."""

    def data_fingerprint(self, options: OptionsT) -> str | None:
        """A hash of the data file the tasks come from, when the code does not fix it (a local
        file, a hub download). It joins the run's fingerprint, so two data sets never mix in
        one run. None: the tasks are fixed by the benchmark's code and options."""
        return None

    @abstractmethod
    async def verify(self, task: Task, output: str, ctx: AttemptContext[OptionsT]) -> Verdict:
        """Judge one output (an LLM verifier asks `ctx.judge`). Raise seqk.errors.JudgeError
        when no verdict can be reached."""

    async def feedback(self, task: Task, output: str, verdict: Verdict,
                       ctx: AttemptContext[OptionsT]) -> str:
        """The feedback the next seq@k attempt will read after this failed attempt, in
        `ctx.mode` (one of `feedback_modes`). Default: `binary_feedback` in the binary mode;
        a benchmark with other modes overrides this."""
        if ctx.mode.name == "binary":
            return self.binary_feedback
        raise NotImplementedError(f"{self.name} declares feedback mode {ctx.mode.name!r} "
                                  "but does not override feedback()")

    def _recording(self, options: OptionsT, mode: FeedbackMode) -> tuple[_PromptRecorder, AttemptContext[OptionsT]]:
        recorder = _PromptRecorder("judge")
        return recorder, AttemptContext(options=options, judge=recorder, critic=recorder, mode=mode)

    async def judge_prompts(self, task: Task, options: OptionsT) -> list[str]:
        """The judge prompts one attempt at `task` sends, with an empty answer in place of the
        output: a budget reserves their worst-case cost before the attempt starts (it bounds the
        answer's size apart). By default, the prompts `verify` sends for an empty answer, recorded
        without calling any model; override when later judge calls depend on earlier replies.
        [] for a verifier that is not an LLM."""
        if self.verifier_of(options) != "llm":
            return []
        recorder, ctx = self._recording(options, self.feedback_modes[0])
        # The recorder answers nothing, so verify ends in an error once it has asked.
        with contextlib.suppress(Exception):
            await self.verify(task, "", ctx)
        return recorder.prompts

    async def critic_prompts(self, task: Task, options: OptionsT, mode: FeedbackMode) -> list[str]:
        """The critic prompts `feedback` sends in `mode` for an empty answer and an empty
        judge's report (a budget bounds both apart), recorded without calling any model."""
        if not mode.llm_critic:
            return []
        recorder, ctx = self._recording(options, mode)
        with contextlib.suppress(Exception):
            await self.feedback(task, "", Verdict(False, 0.0), ctx)
        return recorder.prompts


class AgenticBenchmark(Benchmark[OptionsT]):
    """A benchmark whose attempt is an agent's run (Terminal-Bench through Harbor): one
    `run_attempt` makes the actor's calls and grades them, in place of the engine's actor call
    and `verify`. Its answers cannot be re-judged apart (`seqk rejudge` refuses them)."""

    @abstractmethod
    async def run_attempt(self, task: Task, prompt: str, ctx: AgentContext[OptionsT]) -> AttemptResult:
        """One attempt at `task`: `prompt` is the seq@k prompt the engine built; return what
        was sent, the output, the verdict and the agent's own token counts. Raise
        seqk.errors.AgentRunError when the agent or its harness fails."""

    async def verify(self, task: Task, output: str, ctx: AttemptContext[OptionsT]) -> Verdict:
        """Never called on an agentic benchmark: `run_attempt` grades."""
        raise TypeError(f"{self.name} is agentic: run_attempt grades its attempts")
