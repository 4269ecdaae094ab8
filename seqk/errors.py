"""Every exception seqk raises on purpose, drawn once.

    SeqkError                    base; the CLI prints its message and exits 2
    ├── ConfigError              a variant YAML or option is wrong (lists every issue)
    ├── RunConflict              resuming would mix incompatible results (fingerprint, k, task identity)
    ├── NotFound                 a run, task or file the user named does not exist
    ├── BadInput                 a path or file the user named is the wrong kind (a folder for a
    │                            file, not a DuckDB database, a malformed run folder)
    │   └── DataFileError        a record of a benchmark's data file does not parse or fit
    │                            (names file:line and the field)
    ├── QueryError               a SQL statement the user gave was refused by DuckDB
    ├── StoreBusy                another process held the database for too long
    ├── SqlFileError             a file in sql/ is malformed (names file:line)
    ├── MissingExtra             an optional dependency or model file is not installed
    ├── RejudgeRefused           a run whose answers cannot be graded again (seq@k, agentic, a re-judging run)
    ├── BenchmarkContractError   a benchmark's class does not follow the contract (an old signature)
    ├── UploadError              S3 refused or could not be reached; the local run is untouched (exit 1)
    ├── JudgeError               a judge reply could not be turned into a verdict (an attempt's error)
    │   └── SandboxError         the sandbox that runs a model's code could not start
    ├── AgentRunError            an agent harness (Harbor) crashed, timed out or left no result
    ├── CriticError              a critic could not produce feedback (an attempt's error)
    └── ProviderError            an LLM call failed (kept apart from wrong answers)
        ├── TransientProviderError   429, 5xx, timeout, dropped connection: retried
        └── PermanentProviderError   bad request, unknown model: not retried
            ├── QuotaExceeded        this invocation reached the variant's call quota for a model
            ├── BudgetRefused        a call whose worst case the budget cannot cover was not sent
            ├── AuthError            bad or missing key, no permission: stops the run (exit 1)
            ├── LocalModelCrashed    the embedded model's process died: stops the run (exit 1)
            └── EndpointUnreachable  a role's server refuses connections: stops the run (exit 1)

    HTTPStatusError              (not a SeqkError) a non-2xx answer of an OpenAI-compatible
                                 server, before its provider's `classify` turns it into a ProviderError

Library code raises these; only seqk/cli/ turns them into messages and exit codes.
"""

from __future__ import annotations

from dataclasses import dataclass


class SeqkError(Exception):
    """Base of every error seqk raises on purpose."""

    exit_code = 2


@dataclass(frozen=True)
class ConfigIssue:
    """One problem in a variant: a stable rule id, the field path and what was expected."""

    rule: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"[{self.rule}] {self.field}: {self.message}"


class ConfigError(SeqkError):
    """A variant YAML (or a command's arguments) is wrong; carries every issue at once."""

    def __init__(self, source: str, issues: list[ConfigIssue]):
        self.source = source
        self.issues = issues
        if len(issues) == 1:  # one line, naming the file, the field and what was expected
            super().__init__(f"{source}: {issues[0]}")
            return
        lines = [f"{source}: {len(issues)} problem(s)"] + [f"  {i}" for i in issues]
        super().__init__("\n".join(lines))


class RunConflict(SeqkError):
    """Resuming this run would mix results made under different settings."""


class NotFound(SeqkError):
    """A run, task or file the user named does not exist."""


class BadInput(SeqkError):
    """A path or file the user named exists but cannot be used as asked."""


class DataFileError(BadInput):
    """A record of a benchmark's data file does not parse or does not fit the schema; the
    message names file:line and the field, on one line."""


class QueryError(SeqkError):
    """A SQL statement the user gave failed (syntax, unknown table, a write on a read-only open)."""


class StoreBusy(SeqkError):
    """Another process held the DuckDB file longer than we were willing to wait."""


class SqlFileError(SeqkError):
    """A named query file in sql/ is empty, duplicated or malformed."""


class MissingExtra(SeqkError):
    """An optional dependency (or a model file) is not installed."""


class RejudgeRefused(SeqkError):
    """This run's stored answers cannot be graded again by another judge (the message says why)."""


class BenchmarkContractError(SeqkError):
    """A benchmark's class does not follow the contract seqk calls it by (docs/adding-a-benchmark.md)."""


class ProviderError(SeqkError):
    """An LLM call failed. Recorded as an error, never as a wrong answer."""

    fatal = False
    """True when no later call of the run can succeed either: the run stops at once,
    keeping what finished, instead of failing every remaining attempt."""

    def __init__(self, message: str, *, status_code: int | None = None,
                 retry_after: float | None = None, kind: str | None = None,
                 rate_limited: bool = False, unreachable: bool = False):
        super().__init__(message)
        self.status_code = status_code
        self.retry_after = retry_after
        self.kind = kind or type(self).__name__
        self.rate_limited = rate_limited
        """A rate limit whatever its status (a 429 always is): retried apart, and the model's
        limit on calls in flight backs off."""
        self.unreachable = unreachable
        """The server was not there (refused or dropped the connection), as opposed to one that
        answered badly or slowly: what the endpoint breaker counts."""
        self.retries = 0
        """How many times the call was retried before this error was final."""


class TransientProviderError(ProviderError):
    """Worth retrying: rate limit, server error, timeout, dropped connection."""


class PermanentProviderError(ProviderError):
    """Retrying cannot help: bad key, bad request, unknown model."""


class AuthError(PermanentProviderError):
    """The provider refused the credentials (401, 403, a missing key). Every later call
    would fail the same way, so the run stops."""

    fatal = True
    exit_code = 1


class LocalModelCrashed(PermanentProviderError):
    """The embedded model's worker process died (a signal, out of memory) or could not start.
    The message names the likely cause and the fix."""

    fatal = True
    exit_code = 1


class EndpointUnreachable(PermanentProviderError):
    """A role's server (`api_base`) does not accept connections: before a run, or for a while
    during one with no call getting through. The message names the role, model and URL."""

    fatal = True
    exit_code = 1


class JudgeError(SeqkError):
    """The judge (LLM or verifier) gave nothing that can be turned into a verdict."""


class SandboxError(JudgeError):
    """The sandbox for a model's code could not start: no verdict, never a wrong answer."""


class AgentRunError(SeqkError):
    """An agent harness run (Harbor) crashed, timed out or left no result to read."""


class CriticError(SeqkError):
    """The critic gave nothing usable as feedback."""


class UploadError(SeqkError):
    """S3 refused or could not be reached; the local run is untouched."""

    exit_code = 1


class QuotaExceeded(PermanentProviderError):
    """This invocation reached the variant's call quota for a model."""


class BudgetRefused(PermanentProviderError):
    """A call was not sent: its worst-case cost is more than what its attempt reserved plus what
    the budget has left (the attempt is kept as an error of its stage, for the next run)."""


class HTTPStatusError(Exception):
    """A non-2xx answer from an OpenAI-compatible server (classified into a ProviderError)."""

    def __init__(self, status_code: int, body: str, headers: object):
        super().__init__(f"HTTP {status_code}: {body[:500]}")
        self.status_code = status_code
        self.response = type("Response", (), {"headers": headers})()
