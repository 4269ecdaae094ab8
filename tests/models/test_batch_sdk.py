"""The batch providers' SDK clients: imported on first use, one per provider, the key from the
role's variable (else the provider's own), and one line naming the extra when the SDK is missing."""

from __future__ import annotations

import pytest

from seqk.errors import MissingExtra
from seqk.models.batch.anthropic import AnthropicBatch
from seqk.models.batch.base import SdkBatch
from seqk.models.batch.openai import OpenAIBatch


def test_a_missing_sdk_names_the_extra_to_install():
    class Missing(SdkBatch):
        sdk = "no_such_batch_sdk"
        key_env = "NO_SUCH_KEY"

    needs = r"no_such_batch_sdk/ models needs the no_such_batch_sdk SDK: pip install 'seqk\[batch\]'"
    with pytest.raises(MissingExtra, match=needs):
        Missing(None, None).client()


def test_clients_take_the_roles_key_variable_else_the_providers(monkeypatch):
    monkeypatch.setenv("MY_KEY", "sk-role")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-anthropic")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    role = OpenAIBatch("http://127.0.0.1:9/v1", "MY_KEY")
    assert role.client().api_key == "sk-role" and role.client() is role.client()
    assert OpenAIBatch("http://127.0.0.1:9/v1", None).client().api_key == "no-key-needed"
    assert AnthropicBatch(None, None).client().api_key == "sk-anthropic"
