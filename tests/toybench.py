"""Toy benchmarks for tests: task i asks for the word `w<i>`; a reply is right when
it is exactly that word. One judges deterministically, one through an LLM judge, one is an
agent (run_attempt), and one has a bug in its verifier."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from seqk.benchmark import (
    AgentContext,
    AgenticBenchmark,
    AgentUsage,
    AttemptContext,
    AttemptResult,
    Benchmark,
    FeedbackMode,
    Task,
    Verdict,
)
from seqk.errors import AgentRunError, JudgeError


class ToyOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    n: int = 5
    """How many tasks."""
    flavour: Literal["plain", "spicy"] = "plain"
    """Changes the prompts (a result-changing option)."""


class ToyBench(Benchmark[ToyOptions]):
    name = "toy"
    feedback_modes = (
        FeedbackMode("binary", "right or wrong"),
        FeedbackMode("hint", "shows the expected word", shows_grading_info=True),
        FeedbackMode("critic", "an LLM critic explains", llm_critic=True),
        FeedbackMode("socratic", "an LLM critic asks questions", llm_critic=True),
    )

    def slice_name(self, options):
        return f"{self.name}-{options.flavour}"

    def load_tasks(self, options):
        return [Task(i, f"t{i}", f"Say the word w{i}." + (" Spicy!" if options.flavour == "spicy" else ""),
                     answer=f"w{i}") for i in range(1, options.n + 1)]

    async def verify(self, task, output, ctx: AttemptContext[ToyOptions]):
        ok = output.strip() == task.answer
        return Verdict(ok, 1.0 if ok else 0.0, raw_eval_output=f"expected match: {ok}")

    async def feedback(self, task, output, verdict, ctx: AttemptContext[ToyOptions]):
        if ctx.mode.name == "binary":
            return "Incorrect."
        if ctx.mode.name == "hint":
            return f"Incorrect; the word was {task.answer}."
        return await ctx.critic.complete(f"[{ctx.mode.name}] Critique this answer to '{task.prompt}': {output}")


class ToyLLMJudgeBench(ToyBench):
    name = "toyjudge"
    verifier = "llm"

    async def verify(self, task, output, ctx):
        reply = await ctx.judge.complete(f"Is '{output}' the word {task.answer}? Answer YES or NO.")
        if reply.strip() not in ("YES", "NO"):
            raise JudgeError(f"judge reply not YES/NO: {reply[:80]!r}")
        ok = reply.strip() == "YES"
        return Verdict(ok, float(ok), raw_eval_output=reply)


AGENT_TOOL_TOKENS = (100, 7)
"""Input and output tokens the toy agent reports spending outside seqk's model door, per attempt."""


class ToyAgentBench(ToyBench, AgenticBenchmark[ToyOptions]):
    """An agent: it asks the actor once, then reports extra tool usage of its own. It records
    in the verdict what it saw of earlier attempts, so tests can check seq@k context reaches it."""

    name = "toyagent"
    verify = AgenticBenchmark.verify

    async def run_attempt(self, task: Task, prompt: str, ctx: AgentContext[ToyOptions]) -> AttemptResult:
        reply = (await ctx.actor.complete(prompt)).strip()
        if reply == "crash":
            raise AgentRunError(f"the toy agent crashed on {task.task_id}")
        ok = reply == task.answer
        seen = {"attempt_index": ctx.attempt_index, "k": ctx.k, "seq": ctx.seq,
                "history": [[h.attempt_index, h.output, h.feedback] for h in ctx.history]}
        usage = AgentUsage(model="toy/tool", input_tokens=AGENT_TOOL_TOKENS[0], cached_tokens=0, thinking_tokens=0,
                           output_tokens=AGENT_TOOL_TOKENS[1], latency_s=0.01)
        return AttemptResult(prompt, reply, Verdict(ok, float(ok), f"agent said {reply}", seen), usage)


class ToyBuggyBench(ToyBench):
    """A verifier with a programming error on task 3: a bug, not a judge error."""

    name = "toybuggy"

    async def verify(self, task, output, ctx):
        if task.task_index == 3:
            return {}["missing"]
        return await super().verify(task, output, ctx)


def register_toys() -> None:
    """Put the toy benchmarks in seqk's registry (tests/conftest.py does before every test; a
    module- or session-scoped fixture that runs them calls this first, as it is set up earlier)."""
    from seqk.benchmark import discovery

    reg = discovery.registry()
    reg["toy"] = ToyBench()
    reg["toyjudge"] = ToyLLMJudgeBench()
    reg["toyagent"] = ToyAgentBench()
    reg["toybuggy"] = ToyBuggyBench()
