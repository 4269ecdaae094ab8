"""`--set KEY=VALUE` (and `overrides=` in Python): dotted keys, YAML values, validated as if
written in the file, a problem naming the --set that caused it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import rows, write_variant

from seqk.config import runspec
from seqk.config.overrides import apply, parse_sets
from seqk.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"


def test_dotted_keys_set_one_key_and_values_are_yaml():
    overrides, labels = parse_sets(["k=5", "actor.temperature=0.2", "options.split=training",
                                    "task_indices=[1, 3]", "tag=null", 'prompt.framing_first=""'])
    assert overrides == {"k": 5, "actor.temperature": 0.2, "options.split": "training", "task_indices": [1, 3],
                         "tag": None, "prompt.framing_first": ""}
    assert labels["actor.temperature"] == "--set actor.temperature=0.2"
    data = {"k": 3, "actor": {"max_tokens": 10}, "options": {"split": "evaluation", "x": 1}}
    out = apply(data, overrides, "v.yaml")
    assert out["actor"] == {"max_tokens": 10, "temperature": 0.2}
    assert out["options"] == {"split": "training", "x": 1} and out["prompt"] == {"framing_first": ""}
    assert data["actor"] == {"max_tokens": 10}  # the input is left as it was
    assert apply(data, {"options": {"split": "training"}}, "v.yaml")["options"] == {"split": "training"}


@pytest.mark.parametrize("item", ["k", "=3", "actor..temperature=1", "k=[1,"])
def test_a_malformed_set_is_refused_naming_it(item):
    with pytest.raises(ConfigError, match=r"^--set: \[C01\] --set " + item.replace("[", r"\[").replace(".", r"\.")):
        parse_sets([item])


def test_overrides_are_validated_as_if_written_in_the_file(tmp_path):
    path = write_variant(tmp_path, metric="seq@k", k=3, model="mock/echo", options={"n": 4})
    spec = runspec.load_with_settings(path, *parse_sets(["k=2", "actor.temperature=0.2", "feedback_mode=hint",
                                                         "options.n=3"]))[0]
    assert (spec.k, spec.actor.temperature, spec.feedback_mode, len(spec.tasks)) == (2, 0.2, "hint", 3)
    cases = {
        "actr.temperature=0.2": r"\[C02\] actr: unknown key \(did you mean 'actor'\?\) "
                                r"\(given by --set actr.temperature=0.2\)",
        "k=-1": r"\[C03\] k: Input should be greater than 0 \(got -1\) \(given by --set k=-1\)",
        "feedback_mode=nope": r"\[C05\] feedback_mode: toy has no mode 'nope'.*\(given by --set feedback_mode=nope\)",
        "options.m=1": r"\[C08\] options.m: unknown key \(given by --set options.m=1\)",
        "k.x=1": r"\[C03\] k: is 3, not a mapping, so k.x cannot be set \(given by --set k.x=1\)",
    }
    for item, message in cases.items():
        with pytest.raises(ConfigError, match=message) as caught:
            runspec.load_with_settings(path, *parse_sets([item]))
        assert caught.value.source == str(path)


@pytest.mark.slow  # starts seqk processes
def test_seqk_run_with_set_k_2_runs_k_2(tmp_path):
    db = tmp_path / "seqk.duckdb"
    path = ROOT / "variants" / "arcagi2" / "mock.yaml"  # k: 3 in the file
    done = subprocess.run([sys.executable, "-m", "seqk", "run", str(path), "--db", str(db), "--no-export",
                           "--set", "k=2", "--set", "max_tasks=2", "--set", "feedback_mode=binary"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert rows(db, "SELECT run_id, k, feedback_mode FROM runs") == [
        ("arcagi2-evaluation/seqk/mock__wrong/deterministic/binary", 2, "binary")]
    assert rows(db, "SELECT task_index, max(attempt_index), max(k) FROM attempts GROUP BY 1 ORDER BY 1") == [
        (1, 2, 2), (2, 2, 2)]
    wrong = subprocess.run([sys.executable, "-m", "seqk", "run", str(path), "--db", str(db), "--set", "actr.x=1"],
                           capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert wrong.returncode == 2
    assert wrong.stderr.strip() == (f"error: {path}: [C02] actr: unknown key (did you mean 'actor'?) "
                                    "(given by --set actr.x=1)")
