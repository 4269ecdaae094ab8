"""The base of the benchmarks whose tasks are rows of a data set graded by a scorer of
seqk.verifiers chosen by their options (`dataset`, and `inspect` for inspect_ai's tasks): each
task's answer is a `Reference` (targets, choices, rubric, the row's other fields), the verdict is
the scorer's, and the feedback modes are the same for both.

    binary    only that the answer was wrong
    format    what could not be read in the reply ("no ANSWER: line", "no number in the reply"),
              else that it was wrong; never the expected answer
    raw       the scorer's diagnostic, which names the expected answer (leaks)
    critic    an LLM critic who sees the task and the attempt, not the answer
    socratic  an LLM critic who knows the expected answer, told to ask questions and never to
              reveal it; its questions are derived from the answer, so it counts as a leak
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel

from seqk.benchmark import AttemptContext, Benchmark, FeedbackMode, Task, Verdict
from seqk.verifiers import Reference, format_problem, score, verifier_name

OptionsT = TypeVar("OptionsT", bound=BaseModel)

FEEDBACK_MODES = (
    FeedbackMode("binary", "Only that the answer was not correct."),
    FeedbackMode("format", "What could not be read in the reply (no ANSWER: line, not a number), "
                 "else only that it was wrong; never the expected answer."),
    FeedbackMode("raw", "The scorer's diagnostic, which names the expected answer.", shows_grading_info=True),
    FeedbackMode("critic", "An LLM critic reads the task and the attempt (not the answer) and names "
                 "what to check.", llm_critic=True),
    FeedbackMode("socratic", "An LLM critic who knows the expected answer asks 2-3 guiding questions, "
                 "told never to reveal it.", llm_critic=True, shows_grading_info=True),
)

CRITIC_PROMPT = """You review a failed attempt at a task. You do not know the right answer.

## Task
{task}

## The attempt
{output}

In 2 to 4 short sentences, say what in the attempt looks wrong or unchecked and how the \
author could verify it. Do not write a new answer yourself."""

SOCRATIC_PROMPT = """You give Socratic feedback on a failed attempt. You know the expected answer; \
the student must find it alone.

Rules, all strict:
- Never state, quote, paraphrase or hint at the letters, digits or words of the expected answer.
- Ask 2 or 3 guiding questions that point at where the attempt went wrong.

## Task
{task}

## Expected answer (internal: never reveal it)
{expected}

## The attempt
{output}"""


def reference_answer(target: list[str], choices: list[str] | None = None, rubric: Any = None,
                     metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """A task's `answer`, as plain JSON (what `Task.content_hash` hashes), read back as a Reference;
    what a row does not have is left out (the Reference's defaults)."""
    answer: dict[str, Any] = {"target": target}
    if choices is not None:
        answer["choices"] = choices
    if rubric is not None:
        answer["rubric"] = rubric
    if metadata:
        answer["metadata"] = metadata
    return answer


class SampleBenchmark(Benchmark[OptionsT]):
    """Rows graded by a scorer the options choose; the feedback modes of FEEDBACK_MODES."""

    feedback_modes: ClassVar[tuple[FeedbackMode, ...]] = FEEDBACK_MODES
    binary_feedback: ClassVar[str] = "Your previous answer was not correct."

    @abstractmethod
    def scorer_of(self, options: OptionsT) -> Any:
        """The seqk.verifiers scorer these options grade with."""

    def verifier_of(self, options: OptionsT) -> str:
        """'llm' for llm_rubric (the judge model grades), else the scorer's name."""
        return verifier_name(self.scorer_of(options))

    async def verify(self, task: Task, output: str, ctx: AttemptContext[OptionsT]) -> Verdict:
        """The scorer's verdict on the reply, against the task's Reference."""
        return await score(self.scorer_of(ctx.options), output, task.answer_as(Reference),
                           task_prompt=task.prompt, judge=ctx.judge)

    async def feedback(self, task: Task, output: str, verdict: Verdict, ctx: AttemptContext[OptionsT]) -> str:
        """The feedback of the run's mode (module docstring)."""
        mode = ctx.mode.name
        if mode == "format":
            problem = format_problem(verdict)
            return f"Your previous answer could not be read: {problem}." if problem else self.binary_feedback
        if mode == "raw":
            return verdict.raw_eval_output or self.binary_feedback
        if mode == "critic":
            return (await ctx.critic.complete(CRITIC_PROMPT.format(task=task.prompt, output=output))).strip()
        if mode == "socratic":
            expected = " or ".join(task.answer_as(Reference).target) or "(see the rubric)"
            prompt = SOCRATIC_PROMPT.format(task=task.prompt, expected=expected, output=output)
            return (await ctx.critic.complete(prompt)).strip()
        return self.binary_feedback
