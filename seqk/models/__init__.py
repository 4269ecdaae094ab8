"""The one door to LLMs.

Every call of every role goes through `ModelPool.complete`, which returns the
text, the four token fields, latency and cost. Transient failures (429, 5xx,
timeouts, dropped connections) are retried with exponential backoff and full
jitter, honouring Retry-After; permanent ones (auth, bad request) fail at once
(`retry`).

Which provider answers a model is decided in one place (`registry`): `mock/...`
is built in and needs nothing (scripted replies for tests and benchmarks of the
harness); `local/...` runs in worker processes of its own (seqk.models.local.workers)
reached over loopback; a role with an `api_base` and an `openai/` id talks to
that server directly; everything else goes through litellm, which is imported
on the first real call, credential check or price lookup that needs it, and
never by `import seqk`. Each provider owns its import, its readiness check and
its prices.
"""

from seqk.errors import QuotaExceeded
from seqk.models.base import Completion, Provider
from seqk.models.endpoints import check_endpoints
from seqk.models.litellm_provider import import_litellm
from seqk.models.mock import MockModel, _mock_for, clear_mocks, count_tokens, mock_problem, register_mock
from seqk.models.openai_http import close_sessions, sessions_kept
from seqk.models.pool import ModelPool, Pool
from seqk.models.probe import PROBE_PROMPT, ProbeResult, probe
from seqk.models.registry import (
    check_installed,
    cost_usd,
    credential_problems,
    ensure_ready,
    import_clients,
    known_price,
    missing_credentials,
    model_problem,
    price_of,
    provider_for,
    provider_of,
)
from seqk.models.retry import classify, is_rate_limit

__all__ = [
    "PROBE_PROMPT", "Completion", "MockModel", "ModelPool", "Pool", "ProbeResult", "Provider", "QuotaExceeded",
    "_mock_for", "check_endpoints", "check_installed", "classify", "clear_mocks", "close_sessions",
    "count_tokens", "credential_problems", "cost_usd", "ensure_ready", "import_clients", "import_litellm",
    "is_rate_limit",
    "known_price", "missing_credentials", "mock_problem", "model_problem", "price_of", "probe", "provider_for",
    "provider_of", "register_mock", "sessions_kept",
]
