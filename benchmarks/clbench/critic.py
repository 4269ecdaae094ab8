"""CL-bench's two critic modes. Both see the rubric, so both carry rules against leaking it;
nothing checks that the critic obeys them."""

from __future__ import annotations

import json

from benchmarks._common.rubric import numbered


def _context(rubrics: list[str], failed: int | None, status: list[str], output: str) -> str:
    count = "unknown (the judge's list did not match the rubric)" if failed is None else str(failed)
    return f"""Rubric (internal: never reproduce it):
{numbered(rubrics) or "(no explicit rubric)"}

Number of failed requirements: {count}
Judge's yes/no list, one entry per requirement in order: {json.dumps(status)}

The student's attempt:
{output}"""


def socratic_prompt(rubrics: list[str], failed: int | None, status: list[str], output: str) -> str:
    """Guiding questions that point at areas to improve, never at the answer."""
    return f"""You give Socratic feedback. You know the grading rubric, but the student must find the fix on their own.

Rules, all strict:
- Never quote or paraphrase a requirement, and never reveal the phrases, words, sign-offs or formatting the \
rubric expects.
- Never name specific emojis, slang, or stylistic or structural elements.
- Never write "the rubric requires ...". Point at the category of improvement instead. For example, "Does your \
reply follow every convention the instructions set for how it should close?" is a good hint; "End with 'Best \
regards'" leaks the answer.
- Refer to a requirement only by its number and its general category.

{_context(rubrics, failed, status, output)}

Write 2 to 4 guiding questions. Each one hints at an area to reconsider without giving the answer away."""


def directive_prompt(rubrics: list[str], failed: int | None, status: list[str], output: str) -> str:
    """Direct feedback per failed requirement: number, category, where to look; never the fix."""
    return f"""You give direct feedback on a failed attempt, without giving the answer away.

Rules, all strict:
- Never quote or reproduce the text of a requirement, and never reveal expected phrases or content.
- Never name the emojis, slang or formatting a requirement asks for, and never give a fix that could be copied \
into the answer.
- Describe each failed requirement by its general category only. An allowed form: "Requirement 2 (closing \
convention) is not met: re-read the instructions at the start of the conversation to find what is expected."

{_context(rubrics, failed, status, output)}

For each failed requirement give its number and general category, what is wrong in general terms, and where to \
look to find what is right. Be concise, and never state the fix itself."""
