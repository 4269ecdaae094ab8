"""How seqk finds benchmarks.

A benchmark is a folder `benchmarks/<name>/` whose `__init__.py` defines
`benchmark = <an instance of a Benchmark subclass>`. Nothing else is registered
anywhere: the folder is the registration. Benchmarks outside this repository
register through the `seqk.benchmarks` entry-point group.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from seqk.benchmark.contract import AgenticBenchmark, Benchmark
from seqk.errors import BenchmarkContractError

BUILTIN_PACKAGE = "benchmarks"
"""The top-level package whose sub-folders are the built-in benchmarks."""


def _folder_benchmarks() -> list[Benchmark]:
    """The benchmarks under the `benchmarks/` folders, found by location and loaded by name:
    seqk never imports the `benchmarks` package object, which imports seqk (no import loop)."""
    import importlib
    import importlib.util
    import pkgutil

    spec = importlib.util.find_spec(BUILTIN_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return []
    found = []
    for info in pkgutil.iter_modules(list(spec.submodule_search_locations)):
        if info.name.startswith("_") or not info.ispkg:
            continue
        bench = getattr(importlib.import_module(f"{BUILTIN_PACKAGE}.{info.name}"), "benchmark", None)
        if isinstance(bench, Benchmark):
            found.append(bench)
    return found


@cache
def registry() -> dict[str, Benchmark]:
    """Every benchmark: the folders under benchmarks/, then the `seqk.benchmarks` entry-point group
    (a folder wins a name clash)."""
    from importlib.metadata import entry_points

    found = {bench.name: bench for bench in _folder_benchmarks()}
    for ep in entry_points(group="seqk.benchmarks"):
        bench = ep.load()
        if isinstance(bench, type):
            bench = bench()
        found.setdefault(bench.name, bench)
    return found


def names() -> list[str]:
    """Names of every benchmark seqk can find."""
    return sorted(registry())


def find(name: str) -> Benchmark | None:
    """The benchmark called `name`, or None.

    Its own folder `benchmarks/<name>/` is imported alone when it holds that benchmark: a run
    needs one benchmark, and importing all of them (their judges, sandboxes, data readers) cost
    ~0.3 s of every `seqk run`'s start. Any other name is looked up in the whole registry, as is
    every name once the registry is built (which tests extend)."""
    if registry.cache_info().currsize == 0 and name.isidentifier() and not name.startswith("_"):
        import importlib
        import importlib.util

        spec = importlib.util.find_spec(BUILTIN_PACKAGE)
        folders = spec.submodule_search_locations if spec is not None else None
        if folders and any((Path(folder) / name / "__init__.py").is_file() for folder in folders):
            bench = getattr(importlib.import_module(f"{BUILTIN_PACKAGE}.{name}"), "benchmark", None)
            if isinstance(bench, Benchmark) and bench.name == name:
                return bench
    return registry().get(name)


def get(name: str) -> Benchmark:
    """The benchmark called `name` (KeyError if none). Raises BenchmarkContractError when its
    class does not follow the contract, before any call is made."""
    bench = find(name)
    if bench is None:
        raise KeyError(name)
    problem = contract_problem(bench)
    if problem is not None:
        raise BenchmarkContractError(
            f"benchmark {name} ({type(bench).__module__}.{type(bench).__qualname__}) {problem}; "
            "see docs/adding-a-benchmark.md")
    return bench


_CALLS = {"verify": ("task", "output", "ctx"), "feedback": ("task", "output", "verdict", "ctx")}
"""The arguments seqk passes, by position: a benchmark of the first contract took the judge
or the mode and the critic in place of `ctx`."""


def contract_problem(bench: Benchmark) -> str | None:
    """Why seqk could not call `bench` (an old signature, run_attempt on a plain Benchmark), or None."""
    import inspect

    if not isinstance(bench, AgenticBenchmark) and callable(getattr(bench, "run_attempt", None)):
        return "defines run_attempt but is not an AgenticBenchmark: subclass seqk.benchmark.AgenticBenchmark"
    for method, expected in _CALLS.items():
        params = list(inspect.signature(getattr(bench, method)).parameters.values())
        if any(p.kind is p.VAR_POSITIONAL for p in params):
            continue
        positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if len(positional) != len(expected) or positional[-1] in ("judge", "judge_model", "critic"):
            return (f"defines {method}({', '.join(positional)}); seqk calls {method}({', '.join(expected)}) "
                    "with an AttemptContext holding the options, the judge, the critic and the mode")
    return None
