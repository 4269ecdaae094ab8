"""HealthBench (openai/healthbench): health conversations graded against physician-written
rubric items with signed points; one grader call per item, all in flight at once."""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar, Literal

from pydantic import Field

from benchmarks._common.records import Records
from benchmarks._common.rubric import Grade, weighted_score
from benchmarks._common.rubric_bench import RubricBenchmark
from benchmarks._common.rubric_data import DataOptions, HubFile
from seqk.benchmark import AttemptContext, FeedbackMode, Task, Verdict
from seqk.verifiers import judge_each

from . import data, judge


class HealthbenchOptions(DataOptions):
    """Which HealthBench records to run, and how an answer passes."""

    themes: list[str] = Field(default_factory=lambda: list(data.DEFAULT_THEMES))
    """Keep records with any of these `theme:` example tags; an empty list keeps every record.
    A list, never a plain string."""
    success_threshold: float = Field(0.75, ge=0, le=1)
    """The score an answer needs to pass (besides the two gates)."""
    score_formula: Literal["official", "seq_k"] = "official"
    """'official': met points, negative ones included, over all positive points, unclipped
    (below 0 when met negative items outweigh the rest), as simple-evals scores an example;
    the run's soft score is then the clipped mean. 'seq_k': met positive points only, for
    comparison with seq_k runs."""


class Healthbench(RubricBenchmark[HealthbenchOptions]):
    """HealthBench: the actor answers the patient; a grader rules on every rubric item."""

    name: ClassVar[str] = "healthbench"
    hub: ClassVar[HubFile | None] = HubFile(
        "openai/healthbench", "hard_2025-05-08-21-00-10.jsonl", "c54cd24dffedb5a1c643b4eae3a0b77590eb658a")
    feedback_modes: ClassVar[tuple[FeedbackMode, ...]] = (
        FeedbackMode("binary", "Only that the answer did not pass (score under the pass mark, or "
                     "a safety or negative criterion violated)."),
        FeedbackMode("raw", "The grader's report: every unmet or triggered criterion verbatim with "
                     "its points (a full rubric leak).", shows_grading_info=True),
        FeedbackMode("judge", "An LLM critic turns the grader's report into revision guidance; its "
                     "input lists the criteria, so it leaks too.", llm_critic=True,
                     shows_grading_info=True),
    )
    # simple-evals keeps each example's score unclipped and clips only the mean.
    soft_score_clipped: ClassVar[bool] = True
    binary_feedback: ClassVar[str] = (
        "Your previous answer did not pass the HealthBench grading: its score was below the pass "
        "mark, or it violated a safety or negative criterion. Revise it.")

    def slice_name(self, options: HealthbenchOptions) -> str:
        """`healthbench-default`, or `healthbench-<hash of the themes>`."""
        return data.slice_name(options.themes)

    def tasks_of(self, records: Records, options: HealthbenchOptions) -> list[Task]:
        """The records of the chosen themes."""
        # Before contract v2 the pass rule travelled in the answer, so it is in the hash of
        # every task stored then: it stays there (verify reads it from the options).
        rule = {"threshold": options.success_threshold, "score_formula": options.score_formula}
        return [replace(t, hash_extra=rule) for t in data.tasks(records, options.themes)]

    async def verify(self, task: Task, output: str, ctx: AttemptContext[HealthbenchOptions]) -> Verdict:
        """Pass: score at or above the threshold, no negative item met, no safety-critical
        positive item unmet. The score is kept unclipped (clipping could only lift a score
        below 0 to 0, under any threshold either way, so the rule is the same)."""
        threshold, formula = ctx.options.success_threshold, ctx.options.score_formula
        answer = task.answer_as(data.Answer)
        items = answer.rubrics
        met = await judge_each(ctx.judge, [judge.grader_prompt(answer.prompt_messages, output, i) for i in items],
                               judge.criteria_met)
        grades = [Grade(item, 1.0 if ok else 0.0) for item, ok in zip(items, met, strict=True)]
        counted = grades if formula == "official" else [g for g in grades if g.criterion.weight > 0]
        score = weighted_score(counted, clip=False)
        negatives = sum(g.met for g in grades if g.criterion.weight < 0)
        unsafe = sum(not g.met for g in grades if judge.safety_critical(g.criterion))
        threshold_met = score >= threshold
        success = threshold_met and negatives == 0 and unsafe == 0
        return Verdict(
            success=success, score=score,
            raw_eval_output="" if success else judge.diagnostic(
                score, threshold, grades, answer.secrets),
            details={"rubric_grades": [{"criterion": g.criterion.text, "points": g.criterion.weight,
                                        "tags": list(g.criterion.tags), "criteria_met": g.met}
                                       for g in grades],
                     "score": score, "threshold": threshold,
                     "threshold_met": threshold_met, "triggered_negative_count": negatives,
                     "unmet_safety_critical_count": unsafe})

    def critic_prompt(self, task: Task, output: str, verdict: Verdict, mode: str) -> str:
        """`judge`: the grader's report and the answer."""
        return judge.critic_prompt(verdict.raw_eval_output, output)


benchmark = Healthbench()
