"""AdvancedIF (facebook/AdvancedIF): expert-written instruction-following tasks (complex
single-turn, carried context, system steerability) with yes/no rubrics; one LLM judge call
rules on every requirement, and the answer passes when all are met."""

from __future__ import annotations

from dataclasses import asdict
from typing import ClassVar

from benchmarks._common.records import Records
from benchmarks._common.rubric_bench import RubricBenchmark
from benchmarks._common.rubric_data import DataOptions, HubFile
from seqk.benchmark import AttemptContext, FeedbackMode, Task, Verdict

from . import data, judge


class AdvancedifOptions(DataOptions):
    """Where the AdvancedIF records come from (no filter: use task_indices or max_tasks)."""


class Advancedif(RubricBenchmark[AdvancedifOptions]):
    """AdvancedIF: the actor continues a conversation; the judge checks every requirement."""

    name: ClassVar[str] = "advancedif"
    hub: ClassVar[HubFile | None] = HubFile(
        "facebook/AdvancedIF", "if_oss_full_data.csv", "e20cba9b94b59c027dfab00b29244e8bc42e4ab4")
    feedback_modes: ClassVar[tuple[FeedbackMode, ...]] = (
        FeedbackMode("binary", "Only that not every requirement was satisfied."),
        FeedbackMode("raw", "Yes/No per requirement number, with the judge's reason for each "
                     "unmet one (reasons often paraphrase the requirement).", shows_grading_info=True),
        FeedbackMode("compact", "Only the unmet requirement numbers with the judge's reasons "
                     "(the same leak as raw, shorter).", shows_grading_info=True),
    )
    binary_feedback: ClassVar[str] = (
        "Your previous response did not satisfy all of the instruction requirements. Revise it so "
        "that it meets every requirement.")

    def tasks_of(self, records: Records, options: AdvancedifOptions) -> list[Task]:
        """Every record."""
        return data.tasks(records)

    async def verify(self, task: Task, output: str, ctx: AttemptContext[AdvancedifOptions]) -> Verdict:
        """Success when every requirement is met."""
        answer = task.answer_as(data.Answer)
        rubrics = answer.rubrics
        reply = await ctx.judge.complete(judge.judge_prompt(answer.conversation, output, rubrics))
        verdicts = judge.read_reply(reply, len(rubrics))
        met = sum(v.met for v in verdicts)
        success = met == len(verdicts)
        return Verdict(success=success, score=1.0 if success else 0.0,
                       raw_eval_output="" if success else judge.raw_eval_output(verdicts),
                       details={"verdicts": [asdict(v) for v in verdicts],
                                "rubric_count": len(rubrics), "met_count": met})

    async def feedback(self, task: Task, output: str, verdict: Verdict,
                       ctx: AttemptContext[AdvancedifOptions]) -> str:
        """`binary`, `raw`, or `compact` (the unmet requirements only); no critic. The slice is
        always `advancedif`: the data file's hash, in the fingerprint, tells files apart."""
        if ctx.mode.name == "compact":
            return judge.compact([judge.RequirementVerdict(**v) for v in verdict.details["verdicts"]])
        return await super().feedback(task, output, verdict, ctx)


benchmark = Advancedif()
