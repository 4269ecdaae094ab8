"""seqk/models/litellm_table.py, the generated copy of litellm's providers and the keys each reads,
is what `python -m seqk.models.litellm_gen` writes for the installed litellm, and agrees with
litellm's own answers: so a misspelled provider and a missing key are refused without importing
litellm, and the copy cannot drift from it."""

from __future__ import annotations

import os
import subprocess
import sys
from unittest import mock

import pytest

from seqk.models import litellm_gen, litellm_table
from seqk.models.litellm_provider import _missing_keys, import_litellm

pytestmark = pytest.mark.slow  # litellm's ~4 s import, the generator's probing, a fresh process


def test_the_shipped_table_is_what_the_generator_writes_for_the_installed_litellm():
    from pathlib import Path

    assert litellm_gen.table_source() == Path(litellm_table.__file__).read_text(), (
        "seqk/models/litellm_table.py is stale: python -m seqk.models.litellm_gen")


def test_its_prefixes_are_litellms_provider_list_and_json_providers():
    litellm = import_litellm()
    from litellm.llms.openai_like.json_loader import JSONProviderRegistry

    JSONProviderRegistry.load()
    enum = {getattr(p, "value", p) for p in litellm.provider_list}
    assert enum <= litellm_table.PREFIXES and set(JSONProviderRegistry._providers) <= litellm_table.PREFIXES
    assert enum | set(JSONProviderRegistry._providers) == litellm_table.PREFIXES
    assert {"openai", "anthropic", "gemini", "bedrock", "openrouter", "hosted_vllm"} <= litellm_table.PREFIXES


@pytest.mark.parametrize("prefix", sorted(litellm_table.KEYS))
def test_the_key_check_agrees_with_litellms_validate_environment(prefix):
    """In an environment with nothing, with each accepted set of variables, and with each of those
    sets short of one variable, the table and litellm say the same."""
    litellm = import_litellm()
    model = f"{prefix}/some-model"
    _, alternatives = litellm_table.KEYS[prefix]
    envs = [(), *alternatives, *(tuple(n for n in a if n != drop) for a in alternatives for drop in a)]
    for env in envs:
        with mock.patch.dict(os.environ, dict.fromkeys(env, "x"), clear=True):
            found = litellm.validate_environment(model)
            litellm_ok = bool(found["keys_in_environment"]) or not found["missing_keys"]
            assert (not _missing_keys(model)) == litellm_ok, (prefix, env)


def check_in_a_fresh_process(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_missing_key_and_a_misspelled_provider_are_found_without_importing_litellm():
    out = check_in_a_fresh_process(
        "import sys\n"
        "from seqk import models\n"
        "from seqk.models.role import RoleSpec\n"
        "print(models.credential_problems([RoleSpec(role='actor', model='anthropic/claude-sonnet-4-6')])[0])\n"
        "print(models.model_problem('openaii/gpt-4o-mini'))\n"
        "print('litellm' in sys.modules)\n")
    key, typo, imported = out.splitlines()
    assert "[C10] model: the actor (anthropic/claude-sonnet-4-6) needs $ANTHROPIC_API_KEY" in key
    assert "no provider is called 'openaii' (did you mean 'openai'?" in typo
    assert imported == "False"


def test_ids_litellm_routes_on_its_own_are_left_to_it():
    from seqk import models

    assert models.model_problem("gpt-4o-mini") is None  # no prefix: litellm infers the provider
    assert models.model_problem("hosted_vllm/meta-llama/Llama-3-8B") is None
    assert models.model_problem("meta-llama/Llama-3-8B", "http://127.0.0.1:9/v1") is None  # its server decides
    assert "did you mean 'mock'" in (models.model_problem("mokc/wrong") or "")


@pytest.mark.parametrize("model", sorted(litellm_table.REROUTED))
def test_a_model_litellm_routes_past_its_prefix_is_checked_by_litellm_itself(model):
    """`azure/mistral-large-latest` reads OpenAI's key, not Azure's: the table would be wrong, so
    seqk asks litellm."""
    litellm = import_litellm()
    _, alternatives = litellm_table.KEYS[model.split("/", 1)[0]]
    for env in [(), *alternatives]:
        with mock.patch.dict(os.environ, dict.fromkeys(env, "x"), clear=True):
            found = litellm.validate_environment(model)
            expected = [] if found["keys_in_environment"] else list(found["missing_keys"])
            assert _missing_keys(model) == expected, env
