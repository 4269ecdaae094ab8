"""An offline stand-in judge and critic for smoke runs of researchrubrics
(`judge_model: mock/py:benchmarks.researchrubrics.smoke:judge`): one ruling per criterion, in
the evaluator's contract, without a model. Its rulings are not grades (benchmarks/_common/smoke.py)."""

from __future__ import annotations

import json

from benchmarks._common.smoke import coin, critic

__all__ = ["critic", "judge"]


def judge(prompt: str) -> str:
    """`{"verdict", "score", "confidence", "reasoning", "missing_elements"}` for the criterion of `prompt`."""
    met = coin(prompt)
    return json.dumps({"verdict": "Satisfied" if met else "Not Satisfied", "score": float(met),
                       "confidence": 0.5, "reasoning": "smoke ruling", "missing_elements": []})
