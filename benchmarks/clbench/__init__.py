"""CL-bench (tencent/CL-bench): learn from a long context (invented domain knowledge, rule
systems, procedures, simulations) and answer; one LLM judge call grades the answer against
the task's whole rubric, all or nothing."""

from __future__ import annotations

from typing import ClassVar

from benchmarks._common.records import Records
from benchmarks._common.rubric_bench import RubricBenchmark
from benchmarks._common.rubric_data import DataOptions, HubFile
from seqk.benchmark import AttemptContext, FeedbackMode, Task, Verdict

from . import critic, data, judge


class ClbenchOptions(DataOptions):
    """Which CL-bench records to run."""

    category: str = data.DEFAULT_CATEGORY
    """Keep records whose metadata.context_category is exactly this: 'Domain Knowledge
    Reasoning', 'Rule System Application', 'Procedural Task Execution' or 'Empirical
    Discovery & Simulation'."""


class Clbench(RubricBenchmark[ClbenchOptions]):
    """CL-bench: the actor continues a conversation; the judge applies the rubric."""

    name: ClassVar[str] = "clbench"
    hub: ClassVar[HubFile | None] = HubFile(
        "tencent/CL-bench", "CL-bench.jsonl", "b28a5832a09b0d96c0cf4c22e90d7c60ede25b80")
    feedback_modes: ClassVar[tuple[FeedbackMode, ...]] = (
        FeedbackMode("binary", "Only that the answer did not pass the rubric."),
        FeedbackMode("raw", "The judge's JSON reply verbatim: its rationale restates rubric "
                     "requirements, and a yes/no per requirement.", shows_grading_info=True),
        FeedbackMode("socratic", "An LLM critic who knows the rubric asks 2-4 guiding questions, "
                     "told never to reveal a requirement.", llm_critic=True),
        FeedbackMode("directive", "An LLM critic who knows the rubric names each failed "
                     "requirement's number and category, told never to give the fix.",
                     llm_critic=True),
    )
    binary_feedback: ClassVar[str] = (
        "Your previous answer did not pass the rubric grading. Revise it so that it satisfies "
        "every requirement.")

    def slice_name(self, options: ClbenchOptions) -> str:
        """`clbench-dkr`, `clbench-rsa`, `clbench-pte`, `clbench-eds`, else a hashed name."""
        return data.slice_name(options.category)

    def tasks_of(self, records: Records, options: ClbenchOptions) -> list[Task]:
        """The category's records."""
        return data.tasks(records, options.category)

    async def verify(self, task: Task, output: str, ctx: AttemptContext[ClbenchOptions]) -> Verdict:
        """Success when the judge's Overall Score is 1; the yes/no list is kept, not used."""
        rubrics = task.answer_as(data.Answer).rubrics
        reply = await ctx.judge.complete(judge.judge_prompt(rubrics, output))
        ruling = judge.read_reply(reply)
        total = len(rubrics)
        status = ruling.requirement_status
        failed = status.count("no") if total > 0 and len(status) == total else None
        success = ruling.score == 1
        return Verdict(
            success=success, score=float(ruling.score),
            raw_eval_output="" if success else reply.strip(),
            details={"requirement_status": status, "grading_rationale": ruling.grading_rationale,
                     "failed_requirement_count": failed, "total_requirements": total})

    def critic_prompt(self, task: Task, output: str, verdict: Verdict, mode: str) -> str:
        """`socratic` or `directive`: the critic sees rubric, count, yes/no list and attempt."""
        prompt = {"socratic": critic.socratic_prompt, "directive": critic.directive_prompt}[mode]
        return prompt(task.answer_as(data.Answer).rubrics, verdict.details["failed_requirement_count"],
                      verdict.details["requirement_status"], output)


benchmark = Clbench()
