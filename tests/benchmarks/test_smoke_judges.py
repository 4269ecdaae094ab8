"""Each rubric benchmark's offline stand-in judge lives in its own folder and answers its own
verifier's reply contract: every fixture task gets a verdict, never a JudgeError."""

from __future__ import annotations

import importlib

import pytest
from helpers import context
from rubrichelp import FIXTURES, ScriptedRole, run

from seqk.benchmark import discovery

DATA = {"healthbench": "healthbench.jsonl", "advancedif": "advancedif.jsonl", "clbench": "clbench.jsonl",
        "researchrubrics": "researchrubrics.jsonl"}


@pytest.mark.parametrize("name", sorted(DATA))
def test_the_stand_in_judge_answers_its_own_benchmark(name):
    bench = discovery.get(name)
    smoke = importlib.import_module(f"benchmarks.{name}.smoke")
    options = bench.Options(data_path=str(FIXTURES / DATA[name]))
    verdicts = [run(bench.verify(task, output, context(bench, options, judge=ScriptedRole(smoke.judge))))
                for task in bench.load_tasks(options) for output in ("An answer.", "Another answer, longer.")]
    assert verdicts and all(0.0 <= abs(v.score) <= 1.0 for v in verdicts)
    # Rulings come from a coin over the prompt: over these answers both verdicts show up.
    assert {v.success for v in verdicts} == {True, False}


def test_no_shared_judge_is_left_in_common():
    common = importlib.import_module("benchmarks._common.smoke")
    assert not hasattr(common, "judge")
