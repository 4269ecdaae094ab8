"""A variant's `prompt:` block: the seed's protocol by default (every shipped variant keeps the run
id and fingerprint it had before the block existed), a custom protocol a run of its own, templates
checked when the variant loads."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import write_variant

from seqk.config import runspec
from seqk.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "benchmarks" / "fixtures"
HUB_DATA = {"clbench": "clbench.jsonl", "advancedif": "advancedif.jsonl", "healthbench": "healthbench.jsonl",
            "researchrubrics": "researchrubrics.jsonl"}

# (run_id, fingerprint) of every shipped variant, computed on main at 12cb1ed, before the prompt
# block existed (the hub benchmarks' variants read the test fixtures as their data). A deliberate
# change (a benchmark's prompt_version bumped, a variant edited) updates its row here.
PINNED = {
    "variants/advancedif/passk.yaml": (
        "advancedif/passk/openai__gpt-4.1-mini/openai__gpt-4.1-mini/binary",
        "dcb5394ea3881349c4169ba4d923c3d2b8d554e449528f458e13b470199150c9"),
    "variants/advancedif/seqk.binary.yaml": (
        "advancedif/seqk/openai__gpt-4.1-mini/openai__gpt-4.1-mini/binary",
        "6c5328699a79f60b25c15235884dbc07c85855368170365a3412015393233e34"),
    "variants/advancedif/seqk.compact.yaml": (
        "advancedif/seqk/openai__gpt-4.1-mini/openai__gpt-4.1-mini/compact",
        "6090734216c70171da30418465b0f8da481535adfc56039e028f3b14b3994340"),
    "variants/advancedif/seqk.raw.yaml": (
        "advancedif/seqk/openai__gpt-4.1-mini/openai__gpt-4.1-mini/raw",
        "023f54b0921d5605ae10f69225e463976a422392c263d0017fa5cee19a3bb5cc"),
    "variants/advancedif/smoke.yaml": (
        "advancedif/seqk/mock__echo/mock__py:benchmarks.advancedif.smoke:judge/compact",
        "16a2a8bfd397d0a807383bc05084bb96ac77da2a57da4245b4c2717604205a9e"),
    "variants/arcagi2/mock.yaml": (
        "arcagi2-evaluation/seqk/mock__wrong/deterministic/cell_match",
        "447b9df7088c3b69b521c844a19cfb1f64a2e0d5395632933f7f6bb72839195b"),
    "variants/arcagi2/passk.yaml": (
        "arcagi2-evaluation/passk/anthropic__claude-sonnet-4-6/deterministic/cell_match",
        "081d13f63d6cc35ef46e27f8b5279ba29551b0d5abe3034f9844b27524410872"),
    "variants/arcagi2/seqk.binary.yaml": (
        "arcagi2-evaluation/seqk/anthropic__claude-sonnet-4-6/deterministic/binary",
        "1a88f2af6dc26fb643eaa117d05dce99d4002b83cf7a8d5d5be61f5cb39e289f"),
    "variants/arcagi2/seqk.cell_match.yaml": (
        "arcagi2-evaluation/seqk/anthropic__claude-sonnet-4-6/deterministic/cell_match",
        "e2631fa4b283b28a45ef47487c2eae287d4c8c6e530b86e6190355f6bceea8b9"),
    "variants/clbench/passk.yaml": (
        "clbench-dkr/passk/openai__gpt-4.1-mini/openai__gpt-4.1-mini/binary",
        "be477444dfcb73a4e4234b600bb54e74b5c8816a5e9831718a7bcfa2dd98fc99"),
    "variants/clbench/seqk.binary.yaml": (
        "clbench-dkr/seqk/openai__gpt-4.1-mini/openai__gpt-4.1-mini/binary",
        "f87295d63262412979511fad8947bf0eeda824e9c1dc8c97ef634dae74cc45f4"),
    "variants/clbench/seqk.directive.yaml": (
        "clbench-dkr/seqk/openai__gpt-4.1-mini/openai__gpt-4.1-mini/directive.openai__gpt-4.1-mini",
        "b61519e77eca8642fc158a6f97588d7163903f8dd6d8fd7c07067a1389dc0dac"),
    "variants/clbench/seqk.raw.yaml": (
        "clbench-dkr/seqk/openai__gpt-4.1-mini/openai__gpt-4.1-mini/raw",
        "8d8bb8b9a1d6a53c3afd7be9583bad28774908ec0c7fb27519ffa97c15ee245c"),
    "variants/clbench/seqk.socratic.yaml": (
        "clbench-dkr/seqk/openai__gpt-4.1-mini/openai__gpt-4.1-mini/socratic.openai__gpt-4.1-mini",
        "823a6b198793d96d26743ef40d5ac5da2747c5107b397559488a1a2f831132fb"),
    "variants/clbench/smoke.yaml": (
        "clbench-dkr/seqk/mock__echo/mock__py:benchmarks.clbench.smoke:judge/socratic.mock__py:benchmarks"
        ".clbench.smoke:critic",
        "a427d01d35638ffda4095ddf8e212ec241d54a99e3ceaa131a61e1c7bf54c8db"),
    "variants/healthbench/passk.yaml": (
        "healthbench-default/passk/openai__gpt-4.1-mini/openai__gpt-4.1-mini/binary",
        "821b8059a38ca0323ea768fd5466e696eb7ba3ee3b52d43ea416c17ccbbca12c"),
    "variants/healthbench/seqk.binary.yaml": (
        "healthbench-default/seqk/openai__gpt-4.1-mini/openai__gpt-4.1-mini/binary",
        "867cc816a66b2d8a65fb9f2ce3074e99624593c48873019dc5d2e15c4e50ab8a"),
    "variants/healthbench/seqk.judge.yaml": (
        "healthbench-default/seqk/openai__gpt-4.1-mini/openai__gpt-4.1-mini/judge.openai__gpt-4.1-mini",
        "9489bc55d750b1eeded451602b6fa7f3b404671e1603823ebb9102e2b35d94da"),
    "variants/healthbench/seqk.raw.yaml": (
        "healthbench-default/seqk/openai__gpt-4.1-mini/openai__gpt-4.1-mini/raw",
        "91aaa75e3b0016ce66c31fe7467e08576a37a826cab5e621a38556affd9c828b"),
    "variants/healthbench/smoke.yaml": (
        "healthbench-default/seqk/mock__echo/mock__py:benchmarks.healthbench.smoke:judge/judge.mock__py:b"
        "enchmarks.healthbench.smoke:critic",
        "aa635d79363bf129a1780b0f759f41d5d3e7f553a3dca56500c777353dadae6e"),
    "variants/humaneval/local.yaml": (
        "humaneval/seqk/local__smollm2-135m/sandbox/error_type",
        "0972ef97ba75b482a427b2940f6d1c2bea40f49fbeadb653bb0e9eb7f693a250"),
    "variants/humaneval/passk.yaml": (
        "humaneval/passk/anthropic__claude-sonnet-4-6/sandbox/binary",
        "d218c6d0fb29f2b96cac4be8f76f3e4616952bba4523ac7a04ae8f72b959aec2"),
    "variants/humaneval/seqk.binary.yaml": (
        "humaneval/seqk/anthropic__claude-sonnet-4-6/sandbox/binary",
        "68836653cafca70a617ab5a6c29b07743df9bff6733c3c99cad861d28031c286"),
    "variants/humaneval/seqk.error_type.yaml": (
        "humaneval/seqk/anthropic__claude-sonnet-4-6/sandbox/error_type",
        "fe374908257b27f83665b9a1a9316c5a5b549d5c84e1beb27f4a1dfa3ad8a2b7"),
    "variants/humaneval/seqk.raw.yaml": (
        "humaneval/seqk/anthropic__claude-sonnet-4-6/sandbox/raw",
        "282757b17a496fe8145bdeb75a328cd4dc0a6a0b2af45cbec02bb1bd9872439c"),
    "variants/humaneval/smoke.yaml": (
        "humaneval/seqk/mock__py:benchmarks.humaneval.smoke:actor/sandbox/error_type",
        "70299a62973a2db4570064dc955ddaaed2ba8567712f267a678133b5a698e6e4"),
    # the quickstart's fingerprints changed with its tasks (issue 28.2: they ask for an ANSWER: line)
    "variants/quickstart/passk.yaml": (
        "quickstart/passk/local__smollm2-135m/deterministic/binary",
        "7aa4c788aff7cbc3ec917dd682699cae10569653bd7f1007a338fa698bfdfbc8"),
    "variants/quickstart/seqk.yaml": (
        "quickstart/seqk/local__smollm2-135m/deterministic/binary",
        "4144cf483cb4474740eedca1f330be04cb4346d95e005906a0e10763622b2f52"),
    "variants/researchrubrics/passk.yaml": (
        "researchrubrics/passk/openai__gpt-4.1-mini/openai__gpt-4.1-mini/binary",
        "f7c72ff763edcdc083d06cc6732c83f8fc818308b0cd42844a7da7575c95c40a"),
    "variants/researchrubrics/seqk.binary.yaml": (
        "researchrubrics/seqk/openai__gpt-4.1-mini/openai__gpt-4.1-mini/binary",
        "2a581c6070cdf07dd0fd1228d85effa26bbe670f2456c8d9c41ec19f8bf83d76"),
    "variants/researchrubrics/seqk.critic.yaml": (
        "researchrubrics/seqk/openai__gpt-4.1-mini/openai__gpt-4.1-mini/critic.openai__gpt-4.1-mini",
        "8ad03044ad3661de14ef42b83657f64a25e4ed4d497d88ce1fa123bf880e4339"),
    "variants/researchrubrics/seqk.raw.yaml": (
        "researchrubrics/seqk/openai__gpt-4.1-mini/openai__gpt-4.1-mini/raw",
        "b3bc091202bfb1092b4e2dfa16e411f35354daf6ceafaaabe7b7df45436a4656"),
    "variants/researchrubrics/smoke.yaml": (
        "researchrubrics/seqk/mock__echo/mock__py:benchmarks.researchrubrics.smoke:judge/critic.mock__py:"
        "benchmarks.researchrubrics.smoke:critic",
        "6ad2030fa9a7471166180107b14975baee548e6dd7607a1c4ea9364bc31666ad"),
    "variants/terminalbench/passk.yaml": (
        "terminalbench/passk/anthropic__claude-sonnet-4-6/harbor/binary",
        "a3e3cd1977a929e02c69179486519a13cf7be80c75be67d7d1a3dd5b4181c472"),
    "variants/terminalbench/seqk.binary.yaml": (
        "terminalbench/seqk/anthropic__claude-sonnet-4-6/harbor/binary",
        "a1b7f2e512d04b340e12b0fcb3f366f21bd6acd3fd56aaf10fcf8c8f36af34b7"),
    "variants/terminalbench/seqk.raw.yaml": (
        "terminalbench/seqk/anthropic__claude-sonnet-4-6/harbor/raw",
        "4c752d5004a668e26bb5032ea5122215e35f0b8442477696bbf1ac9d27d6f592"),
    "variants/terminalbench/seqk.retry_diagnostics.yaml": (
        "terminalbench/seqk/anthropic__claude-sonnet-4-6/harbor/retry_diagnostics",
        "0e70eec66751b1fbe70415fd045ce14db6e09da2611ac6085705096497878ee9"),
    "variants/terminalbench/smoke.yaml": (
        "terminalbench-local-local_tasks/seqk/mock__echo/harbor/retry_diagnostics",
        "b0709e746cc907a0b8a5d7c55be9ce46c5f0b95b2421c436098d63cedbf24d44"),
}


def load_shipped(relative: str):
    path = ROOT / relative
    bench = path.parent.name
    overrides = {}
    if bench in HUB_DATA and path.name != "smoke.yaml":
        overrides["options.data_path"] = str(FIXTURES / HUB_DATA[bench])
    return runspec.load(path, overrides)


def test_every_shipped_variant_keeps_its_run_id_and_fingerprint(monkeypatch):
    monkeypatch.chdir(ROOT)
    shipped = {str(p.relative_to(ROOT)) for p in (ROOT / "variants").rglob("*.yaml")}
    assert set(PINNED) <= shipped, sorted(set(PINNED) - shipped)
    changed = {}
    for relative, pinned in PINNED.items():
        spec = load_shipped(relative)
        if (spec.run_id, spec.fingerprint()) != pinned:
            changed[relative] = (spec.run_id, spec.fingerprint())
    assert not changed, changed


SEQ = dict(metric="seq@k", k=3, model="mock/echo", options={"n": 2})


def test_the_default_written_out_is_the_default_run(tmp_path):
    plain = runspec.load(write_variant(tmp_path, "a.yaml", **SEQ))
    spelled = runspec.load(write_variant(tmp_path, "b.yaml", **SEQ, prompt={
        "framing_first": "This is attempt {t} of {k}. If this attempt does not pass, you will receive "
                         "feedback and can revise it on the remaining attempts.",
        "history": "inline", "attempt": "<PreviousAttempt {i}>\n{output}\n</PreviousAttempt {i}>"}))
    assert (spelled.run_id, spelled.fingerprint()) == (plain.run_id, plain.fingerprint())
    assert "prompt" not in plain.config_json() and "prompt" not in plain.fingerprint_fields()


def test_a_custom_protocol_is_a_run_of_its_own(tmp_path):
    plain = runspec.load(write_variant(tmp_path, "a.yaml", **SEQ))
    custom = runspec.load(write_variant(tmp_path, "b.yaml", **SEQ, prompt={
        "framing_later": "Attempt {t} of {k}.", "history": "messages"}))
    other = runspec.load(write_variant(tmp_path, "c.yaml", **SEQ, prompt={"framing_later": "Attempt {t}."}))
    assert custom.run_id.startswith(plain.run_id + "+prompt-") and len(custom.run_id) == len(plain.run_id) + 16
    assert len({plain.run_id, custom.run_id, other.run_id}) == 3
    assert custom.fingerprint_fields()["prompt"] == {"framing_later": "Attempt {t} of {k}.", "history": "messages"}
    assert custom.config_json()["prompt"]["chat"] is True
    tagged = runspec.load(write_variant(tmp_path, "d.yaml", **SEQ, tag="x", prompt={"history": "messages"}))
    assert tagged.run_id.endswith("@x") and "+prompt-" in tagged.run_id


def test_pass_at_k_sends_the_bare_task_whatever_the_block_says(tmp_path):
    plain = runspec.load(write_variant(tmp_path, "a.yaml", **(SEQ | {"metric": "pass@k"})))
    custom = runspec.load(write_variant(tmp_path, "b.yaml", **(SEQ | {"metric": "pass@k"}),
                                        prompt={"system": "Be brief."}))
    assert (custom.run_id, custom.fingerprint()) == (plain.run_id, plain.fingerprint())
    assert any("pass@k sends the bare task" in note for note in custom.notes)


def test_keys_a_run_does_not_use_are_said_aloud_and_stay_out_of_its_identity(tmp_path):
    blind = runspec.load(write_variant(tmp_path, "a.yaml", **SEQ, feedback_mode="none",
                                       prompt={"framing_later": "Again: {t}.", "history": "messages"}))
    plain_none = runspec.load(write_variant(tmp_path, "b.yaml", **SEQ, feedback_mode="none"))
    assert blind.run_id == plain_none.run_id == "toy-plain/seqk/mock__echo/deterministic/none"
    assert {n.split(" is not used")[0] for n in blind.notes} == {"prompt.framing_later", "prompt.history"}
    as_messages = runspec.load(write_variant(tmp_path, "c.yaml", **SEQ, prompt={"history": "messages",
                                                                             "attempt": "{output}"}))
    assert any(n.startswith("prompt.attempt is not used") for n in as_messages.notes)
    assert "attempt" not in as_messages.fingerprint_fields()["prompt"]


@pytest.mark.parametrize(("block", "field", "words"), [
    ({"framing_first": "Attempt {n} of {k}"}, "prompt.framing_first", "unknown placeholder {n}"),
    ({"feedback": "{feedback} {t}"}, "prompt.feedback", "unknown placeholder {t}"),
    ({"attempt": "{output"}, "prompt.attempt", "brace"),
    ({"history": "messages", "framing_later": ""}, "prompt.framing_later", "cannot be empty"),
])
def test_a_bad_template_is_refused_when_the_variant_loads(tmp_path, block, field, words):
    with pytest.raises(ConfigError) as caught:
        runspec.load(write_variant(tmp_path, **SEQ, prompt=block))
    [issue] = caught.value.issues
    assert (issue.rule, issue.field) == ("C13", field) and words in issue.message
    assert "\n" not in str(caught.value)  # one line: file, rule, field, what was expected


def test_an_unknown_prompt_key_and_an_agent_harness_are_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"\[C02\] prompt.framing: unknown key"):
        runspec.load(write_variant(tmp_path, **SEQ, prompt={"framing": "x"}))
    with pytest.raises(ConfigError, match=r"\[C03\] prompt.history: toyagent runs its own agent harness"):
        runspec.load(write_variant(tmp_path, "a.yaml", benchmark="toyagent", metric="seq@k", k=2,
                                   model="mock/echo", prompt={"history": "messages"}))


@pytest.mark.slow  # starts seqk processes
def test_the_cli_refuses_a_bad_template_in_one_line_with_exit_2(tmp_path):
    import subprocess
    import sys

    path = ROOT / "variants" / "arcagi2" / "mock.yaml"
    done = subprocess.run([sys.executable, "-m", "seqk", "plan", str(path), "--db", str(tmp_path / "x.duckdb"),
                           "--set", "prompt.framing_first=Attempt {n}"], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"error: {path}: [C13] prompt.framing_first: unknown placeholder {{n}}; framing_first may hold "
        "{t}, {k} (given by --set prompt.framing_first=Attempt {n})")
    assert not (tmp_path / "x.duckdb").exists()
