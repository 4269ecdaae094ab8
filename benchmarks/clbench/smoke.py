"""An offline stand-in judge and critic for smoke runs of clbench
(`judge_model: mock/py:benchmarks.clbench.smoke:judge`): one all-or-nothing ruling over the
whole rubric, in the grader's contract, without a model. Its rulings are not grades
(benchmarks/_common/smoke.py)."""

from __future__ import annotations

import json

from benchmarks._common.smoke import coin, critic

__all__ = ["critic", "judge"]


def judge(prompt: str) -> str:
    """`{"Grading Rationale", "List of Requirement Satisfaction Status", "Overall Score"}`."""
    return json.dumps({"Grading Rationale": "smoke ruling", "List of Requirement Satisfaction Status": [],
                       "Overall Score": int(coin(prompt))})
