"""notebooks/seqk_compare.ipynb runs top to bottom against a database a mock run produced."""

from __future__ import annotations

from pathlib import Path

import nbformat
from helpers import write_variant
from nbclient import NotebookClient
from scripts import word_of
from test_report import build_mock_db

from seqk import models
from seqk.config import spec as runspec
from seqk.run import scheduler as engine

NOTEBOOK = Path(__file__).parent.parent / "notebooks" / "seqk_compare.ipynb"


def outputs(nb) -> str:
    text = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            text.append(out.get("text", ""))
            text.extend(str(v) for k, v in out.get("data", {}).items() if k.startswith("text/"))
    return "\n".join(text)


def execute(db: Path, folder: Path, monkeypatch) -> nbformat.NotebookNode:
    monkeypatch.setenv("SEQK_DB", str(db))
    # The kernel runs in another folder: it must import this checkout's seqk, not an installed one.
    monkeypatch.setenv("PYTHONPATH", str(NOTEBOOK.parent.parent))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=180, kernel_name="python3",
                   resources={"metadata": {"path": str(folder)}}).execute()
    return nb


def test_notebook_cites_files_that_exist():
    text = NOTEBOOK.read_text()
    assert "docs/views.md" not in text
    readme = (NOTEBOOK.parent.parent / "README.md").read_text()
    assert "Views: the questions the database\\n\",\n    \"answers*" in text
    assert "### Views: the questions the database answers" in readme


def test_notebook_answers_which_model_gains_most(tmp_path, db, monkeypatch):
    build_mock_db(tmp_path, db)
    nb = execute(db, tmp_path, monkeypatch)
    text = outputs(nb)
    # mock/alpha gains 0.40 from feedback; mock/beta gains nothing.
    assert "mock/alpha gains most from feedback (binary): seq@3 0.60 vs pass@3 0.20, " \
           "lift +0.40 on 5 shared tasks" in text
    assert "paired at t=3 on 5 shared tasks" in text
    charts = [out for cell in nb.cells for out in cell.get("outputs", [])
              if "vegaEmbed" in out.get("data", {}).get("text/html", "")]
    assert len(charts) == 1, "the altair chart was not displayed"



def framed_out(prompt: str) -> str:
    """Right on a bare prompt, wrong under the seq@k framing: feedback only hurts."""
    word = word_of(prompt)
    return "wrong" if "attempt" in prompt.lower() else word


def test_a_negative_lift_is_not_called_a_gain(tmp_path, db, monkeypatch):
    models.register_mock("mock/gamma", framed_out)
    for metric in ("pass@k", "seq@k"):
        spec = runspec.load(write_variant(tmp_path, f"gamma-{metric[:-2]}.yaml", benchmark="toy",
                                          metric=metric, k=2, model="mock/gamma", options={"n": 4}))
        engine.run(spec, db)
    text = outputs(execute(db, tmp_path, monkeypatch))
    assert "gains most" not in text
    assert ("Every model loses from feedback; mock/gamma (binary) loses least: seq@2 0.00 vs "
            "pass@2 1.00, lift -1.00 on 4 shared tasks") in text
