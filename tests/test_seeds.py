"""Each call's seed (seqk.seeds): stable, independent across slots, one rule recorded in the
fingerprint of a seeded run only."""

from __future__ import annotations

import hashlib
import json

import pytest
from helpers import write_variant
from scripts import solves_on

from seqk import models, store
from seqk.config import runspec
from seqk.config.identity import fingerprint
from seqk.errors import RunConflict
from seqk.run import engine
from seqk.run.metering import seeded
from seqk.seeds import SEED_SCHEME, seed_for


def documented(base: int, task: int, chain: int, attempt: int, role: str) -> int:
    """The formula of seqk/seeds.py's docstring, written out again."""
    digest = hashlib.blake2b(f"{base}:{task}:{chain}:{attempt}:{role}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") & 0x7FFFFFFF


@pytest.mark.parametrize("slot", [(10, 1, 1, 1, "actor"), (10, 2, 1, 1, "actor"), (0, 7, 3, 1, "critic"),
                                  (2**40, 500, 1, 8, "actor")])
def test_seed_is_the_documented_formula_and_fits_31_bits(slot):
    assert seed_for(*slot) == documented(*slot)
    assert 0 <= seed_for(*slot) < 2**31


def test_seeds_differ_across_tasks_attempts_and_roles():
    assert len({seed_for(1, task, 1, 1) for task in range(1, 201)}) == 200
    assert len({seed_for(1, 1, 1, attempt) for attempt in range(1, 51)}) == 50
    actor = runspec.RoleSpec("actor", "m", seed=5)
    critic = runspec.RoleSpec("critic", "m", seed=5)
    assert seeded(actor, 3, 2, seq=True).seed != seeded(critic, 3, 2, seq=True).seed
    # seq@k attempt 1 and pass@k sample 1 share their seed; seq attempt 2 is not pass sample 2.
    assert seeded(actor, 3, 1, seq=True).seed == seeded(actor, 3, 1, seq=False).seed
    assert seeded(actor, 3, 2, seq=True).seed != seeded(actor, 3, 2, seq=False).seed
    assert seeded(runspec.RoleSpec("actor", "m"), 3, 2, seq=True).seed is None


def spec_for(tmp_path, **keys):
    keys = {"benchmark": "toy", "metric": "seq@k", "k": 2, "model": "mock/echo",
            "options": {"n": 2}} | keys
    return runspec.load(write_variant(tmp_path, **keys))


def test_the_seed_scheme_is_in_a_seeded_runs_fingerprint_only(tmp_path):
    unseeded, seeded_spec = spec_for(tmp_path), spec_for(tmp_path, seed=3)
    assert "seed_scheme" not in unseeded.fingerprint_fields()  # runs made before keep their fingerprint
    assert seeded_spec.fingerprint_fields()["seed_scheme"] == SEED_SCHEME
    assert seeded_spec.config_json()["seed_scheme"] == SEED_SCHEME
    assert "seed_scheme" not in unseeded.config_json()


def test_a_run_seeded_by_the_old_rule_is_not_resumed_into(tmp_path, db):
    models.register_mock("mock/actor", solves_on({}))
    spec = spec_for(tmp_path, seed=3, model="mock/actor")
    engine.run(spec, db)
    old_fields = {k: v for k, v in spec.fingerprint_fields().items() if k != "seed_scheme"}

    with store.connect(db) as con:  # the row as a seqk from before seqk.seeds wrote it
        con.execute("UPDATE run_rows SET fingerprint = ?, fingerprint_fields = ?",
                    [fingerprint(old_fields), json.dumps(old_fields)])
    with pytest.raises(RunConflict, match="seed_scheme.*seed \\+ attempt_index"):
        engine.run(spec, db)
