"""Every variant shipped in variants/ validates against its benchmark."""

from pathlib import Path

import pytest

from seqk import runspec

VARIANTS = sorted((Path(__file__).resolve().parent.parent / "variants").glob("*/*.yaml"))


@pytest.mark.parametrize("path", VARIANTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_shipped_variant_resolves(path):
    spec = runspec.load(path)
    assert spec.benchmark.name == path.parent.name
    assert spec.tasks and spec.run_id.count("/") == 4


def test_there_are_variants():
    assert len(VARIANTS) >= 4
