"""Benchmarks: the contract (seqk.benchmark.contract), how they are found (.discovery), and
the seq@k prompt every attempt is built with (.prompt)."""

from seqk.benchmark.contract import (
    BINARY,
    NONE,
    AgentContext,
    AgenticBenchmark,
    AgentUsage,
    AttemptContext,
    AttemptResult,
    Benchmark,
    FeedbackMode,
    HistoryItem,
    NoOptions,
    RoleClient,
    Task,
    Verdict,
)
from seqk.benchmark.discovery import BUILTIN_PACKAGE, find, get, names, registry

__all__ = [
    "BINARY", "BUILTIN_PACKAGE", "NONE", "AgentContext", "AgentUsage", "AgenticBenchmark", "AttemptContext",
    "AttemptResult", "Benchmark", "FeedbackMode", "HistoryItem", "NoOptions", "RoleClient", "Task",
    "Verdict", "find", "get", "names", "registry",
]
