"""Fixtures of the figures' cache tests (test_memo.py, test_inputs.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from seqk.analysis import memo


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The figure cache on, in this test's own folder; the folder its figures go to."""
    monkeypatch.setenv("SEQK_FIGURE_CACHE", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(memo, "_PRUNED", False)
    return tmp_path / "cache" / "seqk" / "figures"
