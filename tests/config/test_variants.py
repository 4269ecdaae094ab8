"""Every variant shipped in variants/ validates against its benchmark; the offline smoke
variants also run."""

from pathlib import Path

import pytest
import yaml

from seqk.config import runspec
from seqk.config.sweep import is_sweep, load_sweep
from seqk.run import engine

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


def readme_commands(marker: str) -> list[str]:
    """The `seqk ...` lines, comments cut, of the README's ```bash block that names `marker`."""
    import re

    blocks = re.findall(r"^```bash\n(.*?)^```", (ROOT / "README.md").read_text(), re.MULTILINE | re.DOTALL)
    [block] = [b for b in blocks if marker in b]
    return [line.split("#")[0].strip() for line in block.splitlines() if line.startswith("seqk ")]


def seqk_command() -> list[str]:
    """`seqk` as a user runs it: the console script beside this Python (not `python -m`, which puts
    the working folder on sys.path), else the module."""
    import shutil
    import sys

    script = shutil.which("seqk", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "seqk"]


@pytest.mark.slow
def test_the_readme_equal_budget_pair_runs_from_the_repository_root_with_nothing_on_the_path(tmp_path):
    """The README's commands, as pasted, from the root of the checkout: the priced mock is shipped
    code (no tests/ on PYTHONPATH, which would hide the benchmarks), and the report compares the
    4 × 3 seq@k run with its pass@12 partner in US$."""
    import os
    import subprocess

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SEQK_DB")}
    env["SEQK_DB"] = str(tmp_path / "seqk.duckdb")
    commands = readme_commands("equal-budget.seqk.yaml")
    assert [c.split()[:2] for c in commands] == [["seqk", "run"], ["seqk", "run"], ["seqk", "report"]]
    outputs = []
    for command in commands:
        done = subprocess.run(seqk_command() + command.split()[1:], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{command}: {done.stderr}"
        outputs.append(done.stdout)
    seq_id = "arcagi2-evaluation/seqk/mock__py:benchmarks.arcagi2.mocks:seeded/deterministic/cell_match"
    pass_id = seq_id.replace("/seqk/", "/passk/")
    report = outputs[-1]
    # first against the partner that stops too (issue 27), then pass@m, labelled as not spend-matched
    assert f"at equal budget: {seq_id}\n  vs resample until success from pass@k" in report
    assert f"{pass_id} (k=12)" in report and "budget $" in report and "not spend-matched" in report
    # Both runs are whole: 60 tasks each, every call priced.
    assert "60 task(s) · 0 errored attempt(s) · cost $" in report
    assert (tmp_path / "arcagi2-evaluation").is_dir()  # exported beside the database, not in the checkout


# One-run demonstrations, not studies: each says so in its own header comment.
SOLO = {"smoke.yaml", "mock.yaml", "local.yaml", "simulated.yaml"}


def _pairs_with(seq: runspec.RunSpec, other: runspec.RunSpec) -> bool:
    """Whether the report would pair `other` (pass@k) with `seq`: the same benchmark slice, actor,
    verifier and judge (view run_pairs; budget_partners for the equal-budget block)."""
    def slots(s: runspec.RunSpec) -> tuple:
        return (s.benchmark.name, s.slice_name, s.actor.model, s.run_id.split("/")[3], s.judge.model)
    return other.metric == "pass@k" and slots(other) == slots(seq)


def test_every_shipped_seqk_study_variant_has_its_passk_partner_beside_it():
    """A seq@k variant ships with the pass@k variant its report compares it with: k = K for the
    lift, or k ≥ chains × K for a run with chains (its budget partner)."""
    loaded = {p: runspec.load(p) for p in VARIANTS if not is_sweep(p)}
    studies = [p for p, s in loaded.items() if s.metric == "seq@k" and p.name not in SOLO
               and not p.name.startswith("demo.")]  # docs/compare.md's demo compares seq@k runs with each other
    assert len(studies) >= 20
    alone = []
    for path in studies:
        seq = loaded[path]
        need = seq.k if seq.chains == 1 else seq.k * seq.chains
        partners = [q.name for q, s in loaded.items()
                    if q.parent == path.parent and _pairs_with(seq, s) and s.k == need]
        if not partners:
            alone.append(f"{path.relative_to(ROOT)} (k={seq.k}, chains={seq.chains})")
    assert not alone, "seq@k variants without a pass@k partner beside them: " + ", ".join(alone)
    for path in loaded:
        if path.name in SOLO and loaded[path].metric == "seq@k":
            assert path.read_text().startswith("#"), f"{path}: a one-run variant says what it shows"
