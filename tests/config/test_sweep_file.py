"""Sweep files: a base variant and a matrix over its keys, every cell a run of its own, pass@k
partners that share everything but the treatment, and one clear line for a bad file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import write_variant

from seqk.config.sweep import is_sweep, load_sweep
from seqk.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def sweep_file(tmp_path: Path, **keys) -> Path:
    write_variant(tmp_path, "base.yaml", metric="seq@k", k=3, model="mock/echo", options={"n": 2})
    path = tmp_path / "sweeps" / "s.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(yaml.safe_dump({"base": "../variants/toy/base.yaml"} | keys, sort_keys=False))
    return path


def test_a_two_by_two_sweep_with_partners_is_six_runs_paired_as_the_report_pairs(tmp_path):
    path = sweep_file(tmp_path, matrix={"model": ["mock/echo", "mock/wrong"], "feedback_mode": ["binary", "hint"]},
                      partners=True)
    assert is_sweep(path) and not is_sweep(tmp_path / "variants" / "toy" / "base.yaml")
    sweep = load_sweep(path)
    assert sweep.base == (tmp_path / "variants" / "toy" / "base.yaml").resolve()
    assert [c.name for c in sweep.cells] == [
        "model=mock/echo feedback_mode=binary", "model=mock/echo feedback_mode=hint",
        "model=mock/wrong feedback_mode=binary", "model=mock/wrong feedback_mode=hint",
        "pass@k partner: model=mock/echo", "pass@k partner: model=mock/wrong"]
    ids = [c.spec.run_id for c in sweep.cells]
    assert len(set(ids)) == 6
    assert ids[4:] == ["toy-plain/passk/mock__echo/deterministic/binary",
                       "toy-plain/passk/mock__wrong/deterministic/binary"]
    for cell in sweep.cells[:4]:
        partner = next(p for p in sweep.cells[4:] if p.spec.actor.model == cell.spec.actor.model)
        assert (partner.spec.slice_name, partner.spec.k, partner.spec.benchmark.verifier, partner.spec.judge.model) == (
            cell.spec.slice_name, cell.spec.k, cell.spec.benchmark.verifier, cell.spec.judge.model)
        assert partner.spec.actor.result_fields() == cell.spec.actor.result_fields()
    assert sweep.cells[1].command(sweep.base).endswith("--set model=mock/echo --set feedback_mode=hint")


def test_the_treatment_is_what_partners_do_not_share(tmp_path):
    path = sweep_file(tmp_path, partners=True, matrix={
        "prompt": [{}, {"framing_first": ""}], "critic_model": ["mock/echo"], "feedback_mode": ["binary", "critic"],
        "actor.max_tokens": [8, 16]})
    sweep = load_sweep(path)
    partners = [c for c in sweep.cells if c.partner]
    assert [c.values for c in partners] == [{"actor.max_tokens": 8}, {"actor.max_tokens": 16}]
    assert all(c.spec.metric == "pass@k" and c.spec.protocol.identity() == {} for c in partners)
    # max_tokens is in no slot of the run id: the runs it tells apart get a tag of it, and so do
    # the two prompts' cells, whose run ids differ already ("+prompt-...")
    tags = {c.spec.run_id.rpartition("@")[2] for c in sweep.cells}
    assert tags == {"actor.max_tokens-8", "actor.max_tokens-16"}
    assert len({c.spec.run_id for c in sweep.cells}) == len(sweep.cells) == 2 * 2 * 2 + 2


def test_two_cells_that_are_one_run_are_refused(tmp_path):
    path = sweep_file(tmp_path, matrix={"critic_model": ["mock/echo", "mock/wrong"]})  # binary: no critic
    with pytest.raises(ConfigError, match=r"\[C14\] matrix: cells 'critic_model=mock/echo' and "
                                          r"'critic_model=mock/wrong' are one run"):
        load_sweep(path)


def test_overrides_apply_to_every_cell_and_set_comes_first(tmp_path):
    path = sweep_file(tmp_path, matrix={"feedback_mode": ["binary", "none"]}, set={"k": 2, "options.n": 1})
    sweep = load_sweep(path, {"k": 4}, {"k": "--set k=4"})
    assert [(c.spec.k, len(c.spec.tasks)) for c in sweep.cells] == [(4, 1), (4, 1)]


@pytest.mark.parametrize(("keys", "message"), [
    ({"matrix": {"k": [2]}, "partner": True}, r"\[C14\] partner: unknown key"),
    ({"matrix": {"k": 2}}, r"\[C14\] matrix.k: expected a non-empty list of values \(got 2\)"),
    ({"matrix": {"k": []}}, r"\[C14\] matrix.k: expected a non-empty list"),
    ({"matrix": {"k": [2, 2]}}, r"\[C14\] matrix.k: a value is listed twice"),
    ({"matrix": {"k": [2]}, "partners": "yes"}, r"\[C14\] partners: expected true or false"),
    ({"matrix": {"k": [2]}, "base": "nope.yaml"}, r"\[C14\] base: nope.yaml is not a file"),
    ({"matrix": {"feedback_mode": ["binary", "bogus"]}},
     r"\[C05\] feedback_mode: toy has no mode 'bogus'.* \(given by matrix.feedback_mode = bogus\)"),
    ({"matrix": {"actor.temprature": [0.1]}}, r"\[C02\] actor.temprature: unknown key \(did you mean 'temperature'\?\) "
     r"\(given by matrix"),
])
def test_a_bad_sweep_file_is_one_line_naming_the_file_and_the_field(tmp_path, keys, message):
    path = sweep_file(tmp_path, **keys)
    with pytest.raises(ConfigError) as caught:
        load_sweep(path)
    text = str(caught.value)
    assert "\n" not in text and text.startswith(f"{path}: ")
    assert __import__("re").search(message, text), text


@pytest.mark.slow  # starts seqk processes
def test_the_cli_refuses_a_bad_sweep_file_with_exit_2_before_anything_runs(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({"base": str(ROOT / "variants" / "arcagi2" / "mock.yaml"),
                                    "matrix": {"feedback_mode": ["cell_match", "nope"]}}))
    db = tmp_path / "seqk.duckdb"
    for command in ("run", "plan"):
        done = subprocess.run([sys.executable, "-m", "seqk", command, str(path), "--db", str(db)],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 2
        assert done.stderr.startswith(f"error: {path}: [C05] feedback_mode: arcagi2 has no mode 'nope'")
        assert done.stderr.rstrip().endswith("(given by matrix.feedback_mode = nope)")
        assert done.stderr.count("\n") == 1
    assert not db.exists()


@pytest.mark.slow  # starts seqk processes
def test_plan_prints_every_cell_its_calls_and_cost_before_anything_is_spent(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({
        "base": str(ROOT / "variants" / "arcagi2" / "mock.yaml"), "partners": True, "set": {"max_tasks": 2},
        "matrix": {"model": ["mock/wrong", "mock/echo"], "feedback_mode": ["binary", "cell_match"]}}, sort_keys=False))
    db = tmp_path / "seqk.duckdb"
    done = subprocess.run([sys.executable, "-m", "seqk", "plan", str(path), "--db", str(db)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    base = ROOT / "variants" / "arcagi2" / "mock.yaml"
    assert f"sweep {path}: base {base}, 6 runs (4 cells, 2 pass@k partners)" in out
    assert ("\n1. model=mock/wrong feedback_mode=binary\n"
            "  arcagi2-evaluation/seqk/mock__wrong/deterministic/binary  (new run)\n") in out
    assert ("\n6. pass@k partner: model=mock/echo\n"
            "  arcagi2-evaluation/passk/mock__echo/deterministic/binary  (new run)\n") in out
    assert out.count("  attempts 2 to 6, critic calls up to 0; actor cost $0.0000 to $0.0000\n") == 4
    assert out.count("  attempts 6, critic calls up to 0; actor cost $0.0000 to $0.0000\n") == 2
    assert "total: attempts 20 to 36, critic calls up to 0; actor cost $0.0000 to $0.0000" in out
    assert "  alone: seqk run " in out and not db.exists()


def test_options_a_sweep_alone_takes_or_refuses_are_usage_errors(tmp_path):
    from typer.testing import CliRunner

    from seqk.cli import app

    runner = CliRunner()
    path = sweep_file(tmp_path, matrix={"k": [2]})
    variant = tmp_path / "variants" / "toy" / "base.yaml"
    db = str(tmp_path / "seqk.duckdb")
    result = runner.invoke(app, ["run", str(variant), "--parallel", "2", "--db", db])
    assert result.exit_code == 2 and "'--parallel'" in result.output and "is for a sweep file" in result.output
    result = runner.invoke(app, ["run", str(path), "--no-wait", "--db", db])
    assert result.exit_code == 2 and "'--no-wait'" in result.output and "not a sweep" in result.output
    assert not (tmp_path / "seqk.duckdb").exists()
