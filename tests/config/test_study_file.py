"""A study file: validated whole against its two arms (every problem at once, naming the study
file), its identity (what the sequence depends on, not the cap or the window), its seeded order,
and the shipped study files."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import toy_arms, toy_study_file, write_variant

from seqk.config import study as studies
from seqk.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("path", sorted((ROOT / "studies").glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_study_files_resolve(path):
    spec = studies.load(path)
    assert spec.seq.seq and not spec.partner.seq and spec.order and spec.question == "lift"


def test_the_order_is_a_seeded_permutation_that_no_task_set_change_reshuffles():
    order = studies.order_of(list(range(1, 101)), 3)
    assert sorted(order) == list(range(1, 101)) and order != list(range(1, 101))
    assert studies.order_of(list(range(1, 101)), 3) == order != studies.order_of(list(range(1, 101)), 4)
    # the relative order of two tasks depends on them alone
    assert [t for t in order if t <= 50] == studies.order_of(list(range(1, 51)), 3)


def test_the_identity_is_what_the_sequence_depends_on(tmp_path):
    toy_arms(tmp_path, "mock/echo", n=20, max_tokens=8)
    base = studies.load(toy_study_file(tmp_path))
    assert base.window == 16 and base.lift_cells() == {"seq": (1, 3), "partner": (3, 1)}
    same = studies.load(toy_study_file(tmp_path, "b.yaml", budget_usd=5, window=4))
    assert same.study_id == base.study_id and same.window == 4
    for keys in ({"seed": 8}, {"alpha": 0.1}, {"margin": 0.05}):
        assert studies.load(toy_study_file(tmp_path, "c.yaml", **keys)).study_id != base.study_id


def test_every_problem_is_listed_at_once(tmp_path):
    toy_arms(tmp_path, "mock/echo", n=20)
    write_variant(tmp_path, "pass.yaml", benchmark="toy", metric="pass@k", k=2, model="mock/echo",
                  options={"n": 20, "flavour": "spicy"})
    with pytest.raises(ConfigError) as found:
        studies.load(toy_study_file(tmp_path, budget_usd_per_task=0.1))
    text = str(found.value)
    assert text.startswith(f"{tmp_path / 'study.yaml'}: 3 problem(s)")
    assert "the arms are different benchmark slices (toy-plain and toy-spicy)" in text
    assert "the partner has k=2, below the seq arm's k=3" in text
    assert "[C03] budget_usd_per_task: only for question: equal_budget" in text


def test_a_cap_needs_every_role_priced_and_capped(tmp_path):
    toy_arms(tmp_path, "openai/self-hosted", n=20, actor={}, api_base="http://127.0.0.1:9/v1")
    with pytest.raises(ConfigError) as found:
        studies.load(toy_study_file(tmp_path, budget_usd=1.0))
    text = str(found.value)
    assert "[C11] arms.seq: actor.price" in text and "[C12] arms.partner: actor.max_tokens" in text


def test_a_seq_arm_must_be_seq_at_k_and_a_missing_arm_is_named(tmp_path):
    toy_arms(tmp_path, "mock/echo", n=20)
    with pytest.raises(ConfigError, match=r"\[C03\] arms.seq: .*pass.yaml is a pass@k variant"):
        studies.load(toy_study_file(tmp_path, arms={"seq": "variants/toy/pass.yaml",
                                                    "partner": "variants/toy/seq.yaml"}))
    with pytest.raises(ConfigError, match=r"\[C01\] arms.partner: no variant file at"):
        studies.load(toy_study_file(tmp_path, arms={"seq": "variants/toy/seq.yaml", "partner": "nope.yaml"}))


def test_a_seq_partner_is_compared_at_seq_at_k(tmp_path):
    toy_arms(tmp_path, "mock/echo", n=20)
    write_variant(tmp_path, "pass.yaml", benchmark="toy", metric="seq@k", k=3, feedback_mode="binary",
                  model="mock/wrong", options={"n": 20})
    assert studies.load(toy_study_file(tmp_path)).lift_cells() == {"seq": (1, 3), "partner": (1, 3)}
