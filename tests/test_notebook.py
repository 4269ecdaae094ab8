"""notebooks/seqk_compare.ipynb runs top to bottom against a database a mock run produced."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient
from test_report import build_mock_db

NOTEBOOK = Path(__file__).parent.parent / "notebooks" / "seqk_compare.ipynb"


def outputs(nb) -> str:
    text = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            text.append(out.get("text", ""))
            text.extend(str(v) for k, v in out.get("data", {}).items() if k.startswith("text/"))
    return "\n".join(text)


def test_notebook_answers_which_model_gains_most(tmp_path, db, monkeypatch):
    build_mock_db(tmp_path, db)
    monkeypatch.setenv("SEQK_DB", str(db))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=180, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    text = outputs(nb)
    # mock/alpha gains 0.40 from feedback; mock/beta gains nothing.
    assert "mock/alpha gains most from feedback (binary): seq@3 0.60 vs pass@3 0.20, " \
           "lift +0.40 on 5 shared tasks" in text
    assert "paired at t=3 on 5 shared tasks" in text
    charts = [out for cell in nb.cells for out in cell.get("outputs", [])
              if "vegaEmbed" in out.get("data", {}).get("text/html", "")]
    assert len(charts) == 1, "the altair chart was not displayed"

