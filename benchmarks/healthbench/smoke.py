"""An offline stand-in judge and critic for smoke runs of healthbench
(`judge_model: mock/py:benchmarks.healthbench.smoke:judge`): one grader reply per rubric item,
in the grader's contract, without a model. Its rulings are not grades (benchmarks/_common/smoke.py)."""

from __future__ import annotations

import json

from benchmarks._common.smoke import coin, critic

__all__ = ["critic", "judge"]


def judge(prompt: str) -> str:
    """`{"explanation", "criteria_met"}` for the one rubric item of `prompt`."""
    return json.dumps({"explanation": "smoke ruling", "criteria_met": coin(prompt)})
