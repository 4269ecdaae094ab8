"""ResearchRubrics (ScaleAI/researchrubrics): deep-research requests graded against expert
criteria with signed weights; one judge call per criterion, all in flight at once."""

from __future__ import annotations

from dataclasses import asdict
from typing import ClassVar

from benchmarks._common.records import Records
from benchmarks._common.rubric import Grade, weighted_score
from benchmarks._common.rubric_bench import RubricBenchmark
from benchmarks._common.rubric_data import DataOptions, HubFile
from seqk.benchmark import AttemptContext, FeedbackMode, Task, Verdict
from seqk.verifiers import judge_each

from . import data, judge


class ResearchrubricsOptions(DataOptions):
    """Which ResearchRubrics records to run."""

    domains: list[str] | None = None
    """Keep records whose `domain` is one of these (exact strings); none or empty: all."""


class Researchrubrics(RubricBenchmark[ResearchrubricsOptions]):
    """ResearchRubrics: a research report, graded criterion by criterion."""

    name: ClassVar[str] = "researchrubrics"
    hub: ClassVar[HubFile | None] = HubFile(
        "ScaleAI/researchrubrics", "processed_data.jsonl", "85de3115053d1453ed612caacf4a405edc1ad756")
    feedback_modes: ClassVar[tuple[FeedbackMode, ...]] = (
        FeedbackMode("binary", "Only that a mandatory criterion failed or a penalty was triggered."),
        FeedbackMode("raw", "Every failed criterion and triggered penalty verbatim, with its axis, "
                     "the judge's reasoning and missing elements (a full rubric leak).",
                     shows_grading_info=True),
        FeedbackMode("critic", "A rubric-blind LLM critic reads the task and the response and "
                     "names 2-4 gaps; it sees no grading data.", llm_critic=True),
    )
    binary_feedback: ClassVar[str] = (
        "Your previous research response did not satisfy all of the mandatory rubric criteria, or it "
        "triggered a penalty. Revise it so that it addresses every requirement.")

    def slice_name(self, options: ResearchrubricsOptions) -> str:
        """`researchrubrics`, or `researchrubrics-<hash of the domains>`."""
        return data.slice_name(options.domains)

    def tasks_of(self, records: Records, options: ResearchrubricsOptions) -> list[Task]:
        """The records of the chosen domains."""
        return data.tasks(records, options.domains)

    async def verify(self, task: Task, output: str, ctx: AttemptContext[ResearchrubricsOptions]) -> Verdict:
        """Pass: every positive-weight criterion satisfied and no negative-weight one;
        score: the signed weighted compliance, unclipped (it can be negative)."""
        items = task.answer_as(data.Answer).rubrics
        verdicts = await judge_each(ctx.judge, [judge.judge_prompt(output, i) for i in items],
                                    judge.read_reply)
        grades = [Grade(item, v.score, v.reasoning, tuple(v.missing_elements))
                  for item, v in zip(items, verdicts, strict=True)]
        mandatory = [g for g in grades if g.criterion.weight > 0]
        penalties = sum(g.met for g in grades if g.criterion.weight < 0)
        passed = sum(g.met for g in mandatory)
        success = passed == len(mandatory) and penalties == 0
        compliance = weighted_score(grades, clip=False)
        return Verdict(
            success=success, score=compliance,
            raw_eval_output="" if success else judge.diagnostic(grades),
            details={"verdicts": [asdict(v) for v in verdicts], "compliance": compliance,
                     "mandatory_total": len(mandatory), "mandatory_passed": passed,
                     "penalty_triggered": penalties})

    def critic_prompt(self, task: Task, output: str, verdict: Verdict, mode: str) -> str:
        """`critic`: the task prompt and the response only."""
        return judge.critic_prompt(task.prompt, output)


benchmark = Researchrubrics()
