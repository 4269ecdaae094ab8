"""notebooks/seqk_compare.ipynb runs top to bottom against a database a mock run produced."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from helpers import build_mock_db, write_variant
from nbclient import NotebookClient
from scripts import word_of
from toybench import ToyBench

from seqk import models
from seqk.benchmark import discovery
from seqk.config import runspec
from seqk.run import engine

pytestmark = pytest.mark.slow

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
    assert "`docs/views.md` (*Views: the questions the database answers*)" in text
    views = (NOTEBOOK.parent.parent / "docs" / "views.md").read_text()
    assert views.startswith("# Views: the questions the database answers\n")


def test_notebook_answers_which_model_gains_most(tmp_path, db, monkeypatch):
    build_mock_db(tmp_path, db)
    nb = execute(db, tmp_path, monkeypatch)
    text = outputs(nb)
    # mock/alpha gains 0.40 from feedback; mock/beta gains nothing.
    assert "mock/alpha gains most from feedback (binary) on toy-plain: seq@3 0.60 vs pass@3 0.20, " \
           "lift +0.40 [95% CI " in text
    assert "on 5 shared tasks" in text
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
    [verdict] = [line for line in text.splitlines() if "from feedback" in line]
    # One comparison: nothing to rank, so no "most", "least" or "every".
    assert verdict.startswith("mock/gamma (binary) on toy-plain loses from feedback: seq@2 0.00 vs "
                              "pass@2 1.00, lift -1.00 [95% CI "), verdict


class OtherBench(ToyBench):
    """A second benchmark whose run ids sort before toy's."""

    name = "abc"


def vega_specs(nb) -> list[dict]:
    """The Vega-Lite specs of the charts the notebook displayed (inlined in its HTML outputs)."""
    import json
    import re

    specs = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            html = out.get("data", {}).get("text/html", "")
            for m in re.finditer(r"(?:var|const) spec = (\{.*?\});\n", html):
                specs.append(json.loads(m.group(1)))
    return specs


def test_several_benchmarks_are_faceted_paired_on_shared_tasks_and_rendered_offline(
        tmp_path, db, monkeypatch):
    build_mock_db(tmp_path, db)  # toy: mock/alpha and mock/beta, k=3, 5 tasks
    monkeypatch.setitem(discovery.registry(), "abc", OtherBench())
    for metric in ("pass@k", "seq@k"):  # abc: mock/alpha alone, k=2, 3 tasks
        spec = runspec.load(write_variant(tmp_path, f"abc-{metric[:-2]}.yaml", benchmark="abc", metric=metric,
                                          k=2, model="mock/alpha", options={"n": 3}))
        engine.run(spec, db)
    nb = execute(db, tmp_path, monkeypatch)
    text = outputs(nb)
    # Offline: Vega is inlined, nothing is fetched from a CDN.
    assert "cdn.jsdelivr" not in text and "vegaEmbed" in text
    [spec] = vega_specs(nb)
    curves = spec["vconcat"][0]
    # One panel per (benchmark, model) that has runs, wrapped: abc has mock/alpha alone, so 3
    # panels, not the 2 × 2 grid of a row-by-column facet with an empty one.
    assert curves["facet"]["field"] == "panel" and curves["columns"] == 3
    data = spec["datasets"][curves["data"]["name"]]
    assert sorted({row["panel"] for row in data}) == [
        "abc-plain · mock/alpha", "toy-plain · mock/alpha", "toy-plain · mock/beta"]
    # t is ordinal (a tick per attempt: never "1 2 2 3 3"), and runs 1..K within each series.
    [layer_x] = {json.dumps(layer["encoding"]["x"]) for layer in curves["spec"]["layer"]}
    assert json.loads(layer_x)["type"] == "ordinal"
    by_series: dict[tuple, list[int]] = {}
    for row in data:
        by_series.setdefault((row["panel"], row["series"]), []).append(row["t"])
    assert all(ts == list(range(1, len(ts) + 1)) for ts in by_series.values())
    # Every axis is titled.
    assert json.loads(layer_x)["title"] and curves["spec"]["layer"][0]["encoding"]["y"]["title"]
    # The two models are compared on the benchmark both ran, on its 5 tasks, with n and an interval.
    assert ("toy-plain: paired at t=3 on 5 shared tasks, the first run minus the second: "
            "toy-plain/seqk/mock__alpha/deterministic/binary − "
            "toy-plain/seqk/mock__beta/deterministic/binary = +0.00 [") in text
    assert "0 shared tasks" not in text
    assert "lift +0.40 [95% CI " in text and "on 5 shared tasks" in text


def test_pip_install_seqk_notebook_brings_what_the_notebook_imports():
    """Every module the notebook imports comes with seqk or its `notebook` extra, and the extra
    holds a front end and a kernel."""
    import ast
    import importlib.metadata
    import re
    import sys
    import tomllib

    project = tomllib.loads((NOTEBOOK.parent.parent / "pyproject.toml").read_text())["project"]
    extra = project["optional-dependencies"]["notebook"]

    def name(requirement: str) -> str:
        return re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].lower().replace("_", "-")

    declared = {name(r) for r in project["dependencies"] + extra}
    assert {"jupyterlab", "ipykernel"} <= {name(r) for r in extra}
    imported = set()
    for cell in nbformat.read(NOTEBOOK, as_version=4).cells:
        if cell.cell_type == "code":
            for node in ast.walk(ast.parse(cell.source)):
                if isinstance(node, ast.Import):
                    imported |= {a.name.split(".")[0] for a in node.names}
                elif isinstance(node, ast.ImportFrom) and node.module:
                    imported.add(node.module.split(".")[0])
    third_party = imported - set(sys.stdlib_module_names) - {"seqk"}
    assert {"altair", "IPython"} <= third_party
    owners = importlib.metadata.packages_distributions()
    for module in third_party:
        assert {d.lower().replace("_", "-") for d in owners[module]} & declared, module
