"""Every variant shipped in variants/ validates against its benchmark; the offline smoke
variants also run."""

from pathlib import Path

import pytest
import yaml

from seqk.config import spec as runspec
from seqk.config.sweep import is_sweep, load_sweep
from seqk.run import scheduler as engine

ROOT = Path(__file__).resolve().parents[2]
VARIANTS = sorted((ROOT / "variants").glob("*/*.yaml"))
FIXTURES = ROOT / "tests" / "benchmarks" / "fixtures"
# The hub files of the rubric benchmarks, served from the test fixtures (this machine is offline).
HUB_FIXTURES = {"CL-bench.jsonl": "clbench.jsonl", "if_oss_full_data.csv": "advancedif.csv",
                "hard_2025-05-08-21-00-10.jsonl": "healthbench.jsonl",
                "processed_data.jsonl": "researchrubrics.jsonl"}


@pytest.fixture(autouse=True)
def _offline_hub(monkeypatch):
    import huggingface_hub

    monkeypatch.chdir(ROOT)  # smoke variants name their data relative to the repository root
    monkeypatch.setattr(huggingface_hub, "hf_hub_download",
                        lambda filename, **_: str(FIXTURES / HUB_FIXTURES[filename]))


@pytest.mark.parametrize("path", VARIANTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_shipped_variant_resolves(path):
    # a sweep file: every cell resolves
    specs = [cell.spec for cell in load_sweep(path).cells] if is_sweep(path) else [runspec.load(path)]
    for spec in specs:
        assert spec.benchmark.name == path.parent.name
        assert spec.tasks and spec.run_id.count("/") == 4


@pytest.mark.parametrize("path", sorted((ROOT / "variants").glob("*/smoke.yaml")),
                         ids=lambda p: p.parent.name)
def test_smoke_variant_runs_offline(path, db, tmp_path):
    spec = runspec.load(path)
    if spec.benchmark.name == "terminalbench":  # its fake Harbor writes job folders: not in the checkout
        options = dict(yaml.safe_load(path.read_text())["options"], jobs_root=str(tmp_path / "jobs"))
        spec = runspec.load(path, {"options": options})
    result = engine.run(spec, db)
    assert result.attempts_written >= len(spec.tasks) and not result.error_kinds
    # Each smoke variant shows both verdicts, so feedback reaches a later attempt.
    assert result.tasks_passed + result.tasks_failed == len(spec.tasks)


@pytest.mark.parametrize("path", sorted((ROOT / "variants").glob("*/smoke.yaml")),
                         ids=lambda p: p.parent.name)
def test_smoke_variants_need_no_model_to_be_installed(path):
    spec = runspec.load(path)
    models = [role.model for role in (spec.actor, spec.judge, spec.critic) if role.model is not None]
    assert all(model.startswith("mock/") for model in models), models


def test_every_benchmark_with_variants_has_an_offline_smoke_variant():
    folders = {p.parent.name for p in VARIANTS} - {"quickstart"}  # the embedded model's demo
    offline = {name for name in folders
               if any((ROOT / "variants" / name / f).is_file() for f in ("smoke.yaml", "mock.yaml"))}
    assert offline == folders


def test_there_are_variants():
    assert len(VARIANTS) >= 4
