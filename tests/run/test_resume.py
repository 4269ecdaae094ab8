"""The one rule that decides, for `seqk run` and `seqk plan` alike, what a variant does with
the run its database already holds."""

from __future__ import annotations

import json

import pytest
from helpers import write_variant

from seqk.config import runspec
from seqk.run import engine
from seqk.run.plan import plan_run
from seqk.run.prepare import Paid, decide


def spec_for(tmp_path, name="v.yaml", **keys):
    keys = {"benchmark": "toy", "metric": "seq@k", "k": 3, "model": "mock/wrong", "options": {"n": 2}} | keys
    return runspec.load(write_variant(tmp_path, name, **keys))


def stored(spec, *, k=None, generation=2):
    """The runs row a database would hold for `spec` (at another k, in another generation)."""
    return {"fingerprint": spec.fingerprint(), "fingerprint_fields": json.dumps(spec.fingerprint_fields()),
            "k": spec.k if k is None else k, "generation": generation}


def test_no_stored_run_is_a_new_run_in_generation_1(tmp_path):
    decision = decide(None, spec_for(tmp_path))
    assert (decision.action, decision.generation, decision.previous_k) == ("new", 1, None)


def test_same_settings_and_k_resume_the_stored_generation(tmp_path):
    spec = spec_for(tmp_path)
    decision = decide(stored(spec, generation=2), spec)
    assert (decision.action, decision.generation, decision.previous_k) == ("resume", 2, 3)


def test_larger_k_with_continue_extends_the_stored_generation(tmp_path):
    spec = spec_for(tmp_path, k=5, **{"continue": True})
    decision = decide(stored(spec, k=3, generation=2), spec)
    assert (decision.action, decision.generation, decision.previous_k) == ("extend", 2, 3)


def test_larger_k_with_continue_false_restarts_in_a_fresh_generation(tmp_path):
    spec = spec_for(tmp_path, k=5, **{"continue": False})
    decision = decide(stored(spec, k=3, generation=2), spec, Paid(4, 0.25, 0, 100, 10))
    assert (decision.action, decision.generation, decision.previous_k) == ("restart", 3, 3)


def test_larger_k_without_continue_restarts_only_a_run_that_paid_nothing(tmp_path):
    spec = spec_for(tmp_path, k=5)
    assert decide(stored(spec, k=3), spec, Paid(0, None, 0, 0, 0)).action == "restart"
    decision = decide(stored(spec, k=3, generation=2), spec, Paid(4, 0.25, 0, 100, 10))
    assert (decision.action, decision.refused_on, decision.generation) == ("refuse", "restart", 3)
    assert "discards its 4 attempts ($0.2500)" in decision.reason
    assert "`continue: true`" in decision.reason and "seqk run --restart" in decision.reason


def test_what_a_restart_discards_says_tokens_when_calls_have_no_price():
    assert Paid(3, None, 6, 1200, 45).describe() == "3 attempts (1,200 tokens in / 45 out; no price known)"
    assert Paid(3, 0.5, 2, 1200, 45).describe() == (
        "3 attempts ($0.5000 for priced calls, plus 2 unpriced calls; 1,200 tokens in / 45 out)")


def test_changed_settings_are_refused_naming_them(tmp_path):
    old = spec_for(tmp_path, "old.yaml")
    new = spec_for(tmp_path, "new.yaml", temperature=0.2)
    decision = decide(stored(old), new)
    assert (decision.action, decision.refused_on, decision.changed) == ("refuse", "settings", ("actor.temperature",))
    assert "different settings (actor.temperature)" in decision.reason and "tag:" in decision.reason


def test_a_smaller_k_is_refused(tmp_path):
    spec = spec_for(tmp_path, k=2)
    decision = decide(stored(spec, k=4), spec)
    assert (decision.action, decision.refused_on, decision.changed) == ("refuse", "k", ())
    assert "has k=4; k=2 is smaller" in decision.reason


@pytest.mark.parametrize(("stored_k", "keys", "state", "attempts"), [
    (3, {}, "resume", (0, 0)),
    (2, {"continue": True}, "extend k 2→3", (2, 2)),
    (2, {"continue": False}, "restart at k=3 (stored k=2)", (2, 6)),
    (2, {}, "REFUSED: run toy-plain/seqk/mock__wrong/deterministic/binary has k=2; k=3 without "
            "`continue:` restarts it in a new generation and discards its 4 attempts ($0.0000) (they "
            "stay in the database but no longer count). To keep them and go on, write `continue: true` "
            "in the variant; to restart and pay again, run `seqk run --restart` (or write "
            "`continue: false`).", (2, 6)),
    (4, {}, "REFUSED: k=3 is smaller than the stored k=4", (2, 6)),
])
def test_plan_states_follow_the_decision(tmp_path, db, stored_k, keys, state, attempts):
    engine.run(spec_for(tmp_path, "first.yaml", k=stored_k), db)
    plan = plan_run(spec_for(tmp_path, "first.yaml", **keys), db)
    assert plan.state == state
    assert (plan.attempts_min, plan.attempts_max) == attempts


def test_a_changed_fingerprint_is_refused_even_when_no_field_name_differs(tmp_path):
    spec = spec_for(tmp_path)
    decision = decide(stored(spec) | {"fingerprint": "made-by-another-seqk"}, spec)
    assert (decision.action, decision.refused_on) == ("refuse", "settings")
