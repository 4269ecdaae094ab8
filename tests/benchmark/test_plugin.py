"""A benchmark from another distribution, found through the `seqk.benchmarks` entry-point group:
a real (fake) package with its dist-info on PYTHONPATH, driven by `python -m seqk` in a subprocess."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
import yaml
from procs import seqk_from

REPO = Path(__file__).resolve().parents[2]

PLUGIN = '''
from seqk.benchmark import Benchmark, FeedbackMode, Task, Verdict


class Parrot(Benchmark):
    name = "parrot"
    feedback_modes = (FeedbackMode("binary", "right or wrong"),)

    def load_tasks(self, options):
        return [Task(i, f"p{i}", f"Repeat after me: squawk{i}", answer=f"squawk{i}") for i in (1, 2, 3)]

    async def verify(self, task, output, ctx):
        ok = output.strip() == task.answer
        return Verdict(ok, float(ok), raw_eval_output=f"parrot says {ok}")

    async def feedback(self, task, output, verdict, ctx):
        return f"Wrong ({ctx.mode.name})."


def answer(prompt):
    """The mock actor's script: right on tasks 1 and 3 only."""
    return prompt.split(": ")[1].split()[0] if ("squawk1" in prompt or "squawk3" in prompt) else "quack"
'''


def _install_plugin(site: Path) -> None:
    (site / "seqk_parrot").mkdir(parents=True)
    (site / "seqk_parrot" / "__init__.py").write_text(PLUGIN)
    dist = site / "seqk_parrot-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: seqk-parrot\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[seqk.benchmarks]\nparrot = seqk_parrot:Parrot\n")


@pytest.mark.slow
def test_an_entry_point_benchmark_is_planned_and_run_with_a_mock_model(tmp_path):
    site = tmp_path / "site"
    _install_plugin(site)
    variant = tmp_path / "variants" / "parrot" / "v.yaml"
    variant.parent.mkdir(parents=True)
    variant.write_text(yaml.safe_dump({"metric": "seq@k", "k": 2, "model": "mock/py:seqk_parrot:answer"}))
    db = tmp_path / "seqk.duckdb"

    planned = seqk_from(site, "plan", str(variant), "--db", str(db), cwd=REPO)
    assert planned.returncode == 0, planned.stderr
    assert planned.stdout.startswith("parrot/seqk/mock__py:seqk_parrot:answer/deterministic/binary")
    assert "tasks selected: 3" in planned.stdout

    ran = seqk_from(site, "run", str(variant), "--db", str(db), cwd=REPO)
    assert ran.returncode == 0, ran.stderr
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT DISTINCT benchmark FROM runs").fetchall() == [("parrot",)]
        attempts = con.execute("SELECT task_index, attempt_index, success, feedback FROM attempts "
                               "ORDER BY 1, 2").fetchall()
    assert attempts == [(1, 1, True, None), (2, 1, False, "Wrong (binary)."), (2, 2, False, "Wrong (binary)."),
                        (3, 1, True, None)]


@pytest.mark.slow  # starts seqk processes
def test_a_benchmark_of_the_first_contract_is_named_with_what_to_change(tmp_path):
    site = tmp_path / "site"
    _install_plugin(site)
    old = (site / "seqk_parrot" / "__init__.py").read_text()
    (site / "seqk_parrot" / "__init__.py").write_text(old.replace(
        "async def feedback(self, task, output, verdict, ctx):\n        return f\"Wrong ({ctx.mode.name}).\"",
        "async def feedback(self, task, output, verdict, mode, critic):\n        return f\"Wrong ({mode.name}).\""))
    variant = tmp_path / "variants" / "parrot" / "v.yaml"
    variant.parent.mkdir(parents=True)
    variant.write_text(yaml.safe_dump({"metric": "seq@k", "k": 2, "model": "mock/py:seqk_parrot:answer"}))
    db = tmp_path / "seqk.duckdb"

    ran = seqk_from(site, "run", str(variant), "--db", str(db), cwd=REPO)
    assert ran.returncode == 2 and "Traceback" not in ran.stderr
    assert ran.stderr.strip().splitlines() == [
        "error: benchmark parrot (seqk_parrot.Parrot) defines feedback(task, output, verdict, mode, critic); "
        "seqk calls feedback(task, output, verdict, ctx) with an AttemptContext holding the options, the "
        "judge, the critic and the mode; see docs/adding-a-benchmark.md"]
    assert not db.exists()
