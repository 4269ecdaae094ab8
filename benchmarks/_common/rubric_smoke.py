"""An offline stand-in judge and critic for smoke runs of the rubric benchmarks
(`judge_model: mock/py:benchmarks._common.rubric_smoke:judge`): it answers each benchmark's
reply contract without a model, so a variant can exercise the whole path (prompts, judge
fan-out, scores, feedback, store, report) on a laptop with no network.

Its rulings are not grades: a criterion counts as met when a hash of the criterion and the
answer says so (about half the time), so a changed answer can change the verdict.
"""

from __future__ import annotations

import hashlib
import json
import re

_SECTION = re.compile(r"## Requirements\n(.*?)\n\n", re.DOTALL)


def _coin(*parts: str) -> bool:
    return hashlib.sha256("\x00".join(parts).encode()).digest()[0] % 2 == 0


def judge(prompt: str) -> str:
    """A well-formed reply for whichever rubric judge wrote `prompt`."""
    if "Rubric Criterion to Evaluate" in prompt:  # researchrubrics, one criterion
        met = _coin(prompt)
        return json.dumps({"verdict": "Satisfied" if met else "Not Satisfied", "score": float(met),
                           "confidence": 0.5, "reasoning": "smoke ruling", "missing_elements": []})
    if "# Rubric item" in prompt:  # healthbench, one item
        return json.dumps({"explanation": "smoke ruling", "criteria_met": _coin(prompt)})
    if "## Requirements" in prompt:  # advancedif, every requirement at once
        section = _SECTION.search(prompt + "\n\n")
        items = re.findall(r"^\d+\. (.*)$", section.group(1) if section else "", re.MULTILINE)
        return json.dumps({"verdicts": [{"question": i, "met": _coin(prompt, text), "reason": "smoke ruling"}
                                        for i, text in enumerate(items, start=1)]})
    score = int(_coin(prompt))  # clbench, the whole rubric
    return json.dumps({"Grading Rationale": "smoke ruling", "List of Requirement Satisfaction Status": [],
                       "Overall Score": score})


def critic(prompt: str) -> str:
    """Feedback that names no grading data."""
    return "Re-read the task and check every part of your answer against it."
