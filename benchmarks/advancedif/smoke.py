"""An offline stand-in judge for smoke runs of advancedif
(`judge_model: mock/py:benchmarks.advancedif.smoke:judge`): one verdict per numbered
requirement, in the judge's contract, without a model. Its rulings are not grades
(benchmarks/_common/smoke.py)."""

from __future__ import annotations

import json
import re

from benchmarks._common.smoke import coin

_SECTION = re.compile(r"## Requirements\n(.*?)\n\n", re.DOTALL)


def judge(prompt: str) -> str:
    """`{"verdicts": [{"question", "met", "reason"}, ...]}`, one per requirement of `prompt`."""
    section = _SECTION.search(prompt + "\n\n")
    items = re.findall(r"^\d+\. (.*)$", section.group(1) if section else "", re.MULTILINE)
    return json.dumps({"verdicts": [{"question": i, "met": coin(prompt, text), "reason": "smoke ruling"}
                                    for i, text in enumerate(items, start=1)]})
