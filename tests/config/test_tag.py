"""A temperature sweep lives in one database: `tag:` gives each setting a run of its own."""

from __future__ import annotations

import pytest
from helpers import write_variant

from seqk import models
from seqk.config import runspec
from seqk.errors import ConfigError, RunConflict
from seqk.run import engine


def test_a_tag_makes_a_sixth_part_of_the_run_id_and_a_run_of_its_own(tmp_path, db):
    models.register_mock("mock/actor", ["w1"])
    base = dict(metric="seq@k", k=2, model="mock/actor", options={"n": 2})
    first = runspec.load(write_variant(tmp_path, "a.yaml", temperature=0.2, **base))
    engine.run(first, db)
    hotter = runspec.load(write_variant(tmp_path, "b.yaml", temperature=1.0, **base))
    with pytest.raises(RunConflict, match=r"temperature.*give this variant a `tag:`"):
        engine.run(hotter, db)
    tagged = runspec.load(write_variant(tmp_path, "c.yaml", temperature=1.0, tag="t1.0", **base))
    assert tagged.run_id == first.run_id + "@t1.0"
    assert tagged.run_id.count("/") == 4  # seq_k's five slots, the tag inside the last
    result = engine.run(tagged, db)
    assert result.prepared.action == "new" and result.tasks_passed == 1


@pytest.mark.parametrize("tag", ["a/b", "", "-x", "x" * 65])
def test_a_tag_must_be_path_safe(tmp_path, tag):
    with pytest.raises(ConfigError, match=r"\[C03\] tag"):
        runspec.load(write_variant(tmp_path, metric="pass@k", k=1, model="mock/echo", tag=tag,
                                   options={"n": 1}))
