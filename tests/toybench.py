"""Toy benchmarks for tests: task i asks for the word `w<i>`; a reply is right when
it is exactly that word. One judges deterministically, one through an LLM judge."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from seqk.benchmark import Benchmark, FeedbackMode, Task, Verdict
from seqk.errors import JudgeError


class ToyOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    n: int = 5
    """How many tasks."""
    flavour: Literal["plain", "spicy"] = "plain"
    """Changes the prompts (a result-changing option)."""


class ToyBench(Benchmark):
    name = "toy"
    verifier = "deterministic"
    feedback_modes = (
        FeedbackMode("binary", "right or wrong"),
        FeedbackMode("hint", "shows the expected word", shows_grading_info=True),
        FeedbackMode("critic", "an LLM critic explains", llm_critic=True),
        FeedbackMode("socratic", "an LLM critic asks questions", llm_critic=True),
    )
    default_feedback_mode = "binary"
    Options = ToyOptions

    def slice_name(self, options):
        return f"{self.name}-{options.flavour}"

    def load_tasks(self, options):
        return [Task(i, f"t{i}", f"Say the word w{i}." + (" Spicy!" if options.flavour == "spicy" else ""),
                     answer=f"w{i}") for i in range(1, options.n + 1)]

    async def verify(self, task, output, judge):
        ok = output.strip() == task.answer
        return Verdict(ok, 1.0 if ok else 0.0, raw_eval_output=f"expected match: {ok}")

    async def feedback(self, task, output, verdict, mode, critic):
        if mode.name == "binary":
            return "Incorrect."
        if mode.name == "hint":
            return f"Incorrect; the word was {task.answer}."
        return await critic.complete(f"[{mode.name}] Critique this answer to '{task.prompt}': {output}")


class ToyLLMJudgeBench(ToyBench):
    name = "toyjudge"
    verifier = "llm"

    async def verify(self, task, output, judge):
        reply = await judge.complete(f"Is '{output}' the word {task.answer}? Answer YES or NO.")
        if reply.strip() not in ("YES", "NO"):
            raise JudgeError(f"judge reply not YES/NO: {reply[:80]!r}")
        ok = reply.strip() == "YES"
        return Verdict(ok, float(ok), raw_eval_output=reply)
