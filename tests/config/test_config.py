"""Bad variants are reported all at once, with rule ids and field paths, exit 2, nothing written."""

from __future__ import annotations

import pytest
from helpers import write_variant
from typer.testing import CliRunner

from seqk import models
from seqk.cli import app
from seqk.config import runspec
from seqk.errors import ConfigError

runner = CliRunner()


@pytest.fixture(autouse=True)
def _mock_a():
    models.register_mock("mock/a", ["w1"])


def toy_yaml(folder, name: str, text: str):
    """A toy variant file holding `text` as written (write_variant dumps keys, and cannot misspell YAML)."""
    path = folder / "variants" / "toy" / name
    path.parent.mkdir(parents=True)
    path.write_text(text)
    return path


def issues_of(path) -> list[str]:
    with pytest.raises(ConfigError) as info:
        runspec.load(path)
    return [str(i) for i in info.value.issues]


def test_an_unknown_key_names_the_known_key_it_is_closest_to(tmp_path):
    path = write_variant(tmp_path, metric="seq@k", k=2, model="mock/a", continu=True, max_token=8,
                         actor={"max_tokns": 5, "price": {"input": 1, "output": 2, "cached": 1}},
                         retry={"max_retry": 2}, zzz=1)
    found = issues_of(path)
    assert "[C02] continu: unknown key (did you mean 'continue'?)" in found
    assert "[C02] max_token: unknown key (did you mean 'max_tokens'?)" in found
    assert "[C02] actor.max_tokns: unknown key (did you mean 'max_tokens'?)" in found
    assert "[C02] actor.price.cached: unknown key (did you mean 'cached_input'?)" in found
    assert "[C02] retry.max_retry: unknown key (did you mean 'max_retries'?)" in found
    assert "[C02] zzz: unknown key" in found  # nothing close: no guess
    options = write_variant(tmp_path, "o.yaml", benchmark="arcagi2", metric="seq@k", k=2, model="mock/a",
                            options={"splt": "training"})
    assert "[C08] options.splt: unknown key (did you mean 'split'?)" in issues_of(options)


def test_good_variant_resolves(tmp_path):
    path = write_variant(tmp_path, metric="seqk", k=2, model="mock/a", options={"n": 3},
                         task_indices=[3, 1])
    spec = runspec.load(path)
    assert spec.metric == "seq@k" and spec.benchmark.name == "toy"
    assert [t.task_index for t in spec.tasks] == [1, 3]


def test_unknown_keys_and_wrong_types_are_all_listed(tmp_path):
    path = write_variant(tmp_path, metric="best@k", k="three", model="mock/a", temprature=0.5,
                         judge={"temperature": "hot", "colour": 1})
    found = issues_of(path)
    assert "[C02] temprature: unknown key (did you mean 'temperature'?)" in found
    assert "[C02] judge.colour: unknown key" in found
    assert any(i.startswith("[C03] metric:") for i in found)
    assert any(i.startswith("[C03] k:") for i in found)
    assert any(i.startswith("[C03] judge.temperature:") for i in found)
    assert len(found) == 5


def test_missing_required_key(tmp_path):
    path = write_variant(tmp_path, k=2, model="mock/a")
    assert issues_of(path) == ["[C03] metric: required key is missing"]


def test_unknown_benchmark(tmp_path):
    path = write_variant(tmp_path, benchmark="nosuch", metric="pass@k", k=1, model="mock/a")
    [issue] = issues_of(path)
    assert issue.startswith("[C04] benchmark: unknown benchmark 'nosuch'") and "toy" in issue


def test_benchmark_key_disagreeing_with_folder(tmp_path):
    [issue] = issues_of(toy_yaml(tmp_path, "v.yaml", "benchmark: toyjudge\nmetric: pass@k\nk: 1\nmodel: mock/a\n"))
    assert issue.startswith("[C04] benchmark:") and "variants/toy/" in issue


def test_feedback_mode_option_and_range_problems_come_together(tmp_path):
    path = write_variant(tmp_path, metric="seq@k", k=2, model="mock/a", feedback_mode="vibes",
                         options={"n": 3, "flavour": "sour", "size": 2}, task_indices=[0, 2, 2, 4])
    found = issues_of(path)
    assert any(i.startswith("[C05] feedback_mode: toy has no mode 'vibes'") for i in found)
    assert any(i.startswith("[C08] options.flavour:") for i in found)
    assert "[C08] options.size: unknown key" in found


def test_task_indices_out_of_range(tmp_path):
    path = write_variant(tmp_path, metric="seq@k", k=2, model="mock/a", options={"n": 3},
                         task_indices=[0, 2, 2, 4])
    found = issues_of(path)
    assert "[C07] task_indices[0]: 0 is out of range: this slice has tasks 1..3" in found
    assert "[C07] task_indices[2]: 2 is listed twice" in found
    assert "[C07] task_indices[3]: 4 is out of range: this slice has tasks 1..3" in found


def test_task_indices_and_max_tasks_are_exclusive(tmp_path):
    path = write_variant(tmp_path, metric="seq@k", k=2, model="mock/a", task_indices=[1], max_tasks=2)
    assert issues_of(path) == ["[C06] task_indices: set either task_indices or max_tasks, not both"]


def test_yaml_syntax_error_names_the_line(tmp_path):
    [issue] = issues_of(toy_yaml(tmp_path, "bad.yaml", "metric: seq@k\nk: [1, 2\nmodel: mock/a\n"))
    assert issue.startswith("[C01] line ") and "not valid YAML" in issue


def test_cli_prints_every_issue_exits_2_and_writes_nothing(tmp_path):
    db = tmp_path / "x.duckdb"
    path = write_variant(tmp_path, metric="seq@k", k=0, model="mock/a", feedback_mode="vibes",
                         bogus=True)
    result = runner.invoke(app, ["run", str(path), "--db", str(db)])
    assert result.exit_code == 2
    assert str(path) in result.output
    assert "[C02] bogus: unknown key" in result.output
    assert "[C03] k:" in result.output
    assert not db.exists()


def test_cli_semantic_errors_exit_2_and_write_nothing(tmp_path):
    db = tmp_path / "x.duckdb"
    path = write_variant(tmp_path, metric="seq@k", k=2, model="mock/a", feedback_mode="vibes",
                         task_indices=[99])
    result = runner.invoke(app, ["run", str(path), "--db", str(db)])
    assert result.exit_code == 2
    assert "[C05]" in result.output and "[C07] task_indices[0]: 99 is out of range" in result.output
    assert not db.exists()


def test_secrets_in_the_variant_are_refused(tmp_path):
    path = write_variant(tmp_path, metric="seq@k", k=1, model="mock/a",
                         actor={"extra": {"api_key": "sk-x", "reasoning_effort": "low",
                                          "max_completion_tokens": 5, "top_k": 3}},
                         judge={"extra": {"extra_headers": {"Authorization": "Bearer x"}}})
    found = issues_of(path)
    assert any(i.startswith("[C09] actor.extra.api_key: looks like a secret") for i in found)
    assert any(i.startswith("[C09] judge.extra.extra_headers.Authorization:") for i in found)
    assert len(found) == 2


def test_unknown_mock_models_are_refused_for_every_role_with_the_known_ones(tmp_path):
    models.register_mock("mock/registered", ["w1"])
    path = write_variant(tmp_path, benchmark="toyjudge", metric="seq@k", k=2, model="mock/wrnog",
                         judge_model="mock/jugde", critic_model="mock/py:scripts:no_such_script",
                         feedback_mode="critic", options={"n": 2})
    found = issues_of(path)
    assert len(found) == 3
    assert found[0].startswith("[C03] model: unknown mock model 'mock/wrnog'; known: ")
    assert "mock/echo" in found[0] and "mock/registered" in found[0] and "mock/wrong" in found[0]
    assert "mock/py:module:attr" in found[0]
    assert found[1].startswith("[C03] judge_model: unknown mock model 'mock/jugde'")
    assert found[2] == ("[C03] critic_model: module 'scripts' has no 'no_such_script' for the mock "
                        "script 'mock/py:scripts:no_such_script'")


def test_a_mock_script_module_that_does_not_import_is_refused(tmp_path):
    path = write_variant(tmp_path, metric="seq@k", k=1, model="mock/py:no_such_module_xyz:f")
    [issue] = issues_of(path)
    assert issue.startswith("[C03] model: cannot import the mock script's module 'no_such_module_xyz'")


def test_builtin_registered_and_importable_mocks_are_accepted(tmp_path):
    for model in ("mock/wrong", "mock/echo", "mock/a", "mock/py:scripts:always_wrong"):
        assert runspec.load(write_variant(tmp_path, metric="seq@k", k=1, model=model)).actor.model == model


def test_plan_and_run_refuse_a_mistyped_mock_and_write_nothing(tmp_path):
    db = tmp_path / "x.duckdb"
    path = write_variant(tmp_path, metric="seq@k", k=2, model="mock/wrnog")
    for command in ("plan", "run"):
        result = runner.invoke(app, [command, str(path), "--db", str(db)])
        assert result.exit_code == 2, result.output
        assert "[C03] model: unknown mock model 'mock/wrnog'" in result.output
        assert "Traceback" not in result.output
    assert not db.exists()


@pytest.mark.parametrize(("keys", "field", "said"), [
    ({"executor": "ray"}, "executor", "executor: ray runs synchronous calls only"),
    ({"chains": 2}, "chains", "chains above 1 run with synchronous calls only"),
])
def test_batch_rounds_refuse_what_they_cannot_honour(tmp_path, keys, field, said):
    path = write_variant(tmp_path, benchmark="toy", metric="seq@k", k=2, model="openai/gpt-4o-mini",
                         api_base="http://127.0.0.1:9/v1", batch=True, options={"n": 2}, **keys)
    with pytest.raises(ConfigError) as info:
        runspec.load(path)
    assert [(i.rule, i.field) for i in info.value.issues] == [("C03", field)]
    assert said in str(info.value)


def test_primary_marks_the_comparison_without_changing_the_runs_identity(tmp_path, db):
    from helpers import write_variant
    from typer.testing import CliRunner

    from seqk import models
    from seqk.cli import app
    from seqk.config import runspec
    from seqk.run import engine

    models.register_mock("mock/actor", ["w1"])
    base = dict(metric="seq@k", k=2, model="mock/actor", options={"n": 2})
    plain = runspec.load(write_variant(tmp_path, "a.yaml", **base))
    marked = runspec.load(write_variant(tmp_path, "b.yaml", primary=True, **base))
    assert (marked.run_id, marked.fingerprint()) == (plain.run_id, plain.fingerprint())
    assert marked.config_json()["primary"] is True and "primary" not in plain.config_json()
    engine.run(marked, db)
    engine.run(runspec.load(write_variant(tmp_path, "p.yaml", **(base | {"metric": "pass@k"}))), db)
    out = CliRunner().invoke(app, ["report", "--compare", "--db", str(db)])
    assert out.exit_code == 0, out.output
    assert f"• primary comparison: {marked.run_id} vs " in out.output
    assert "its lift's p-value is the confirmatory one" in out.output
    # the same run resumed without the key: still one run, no longer primary
    assert engine.run(plain, db).prepared.action == "resume"
