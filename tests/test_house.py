"""The rules of the house, checked: imports point down the layers and form no cycle (deferred
imports counted), a subpackage never reaches into the top-level modules above it, seqk/ keeps at
most a dozen modules beside its subpackages, no module passes ~400 lines, and ruff and mypy are
clean. A newcomer who breaks one learns it here, not in review."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SEQK = ROOT / "seqk"

# What each layer may import, top to bottom (ARCHITECTURE.md). The modules at the bottom
# (anytime, cache, errors, power, records, seeds, stats, version) may be imported from anywhere.
BOTTOM = {"anytime", "cache", "errors", "power", "records", "seeds", "stats", "version"}
MAY_IMPORT = {
    "cli": {"api", "render", "analysis", "io", "run", "config", "models", "benchmark", "store", "view"},
    "view": {"analysis", "render", "store"},
    "render": {"analysis"},
    "api": {"io", "run", "analysis", "config", "models", "benchmark", "store", "view", "render"},
    "io": {"analysis", "config", "models", "benchmark", "store"},
    "run": {"config", "models", "benchmark", "store"},
    "analysis": {"store"},
    "config": {"models", "benchmark"},
    "verifiers": {"benchmark"},
    "benchmark": set(),
    "models": set(),
    "store": set(),
}


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(SEQK.rglob("*.py"))}


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Every seqk module `name` imports, at the top or inside a function."""
    found: set[str] = set()
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = name.split(".")
                keep = len(parts) - node.level + (1 if is_package else 0)
                base = ".".join(parts[:keep] + ([base] if base else []))
            subs = {f"{base}.{alias.name}" for alias in node.names} & known
            found |= subs or {base}
    return {m for m in found if m in known and m != name}


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: imports(name, path, set(mods)) for name, path in mods.items()}


def test_no_import_cycle_even_through_deferred_imports():
    edges = graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def strongconnect(node: str) -> None:  # Tarjan: every strongly connected component once
        index[node] = low[node] = len(index)
        stack.append(node)
        for dep in edges[node]:
            if dep not in index:
                strongconnect(dep)
                low[node] = min(low[node], low[dep])
            elif dep in stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            strongconnect(node)
    assert not cycles, f"import cycles: {cycles}"


def layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "seqk"


def test_imports_point_down_the_layers():
    wrong = []
    for name, deps in graph().items():
        own = layer(name)
        allowed = MAY_IMPORT.get(own)
        if allowed is None:  # a top-level module: only the bottom ones import nothing above them
            if own in BOTTOM:
                wrong += [f"{name} -> {d}" for d in deps]
            continue
        for dep in deps:
            target = layer(dep)
            if target != own and target not in allowed | BOTTOM:
                wrong.append(f"{name} -> {dep}")
    assert not wrong, "imports that point up or sideways:\n" + "\n".join(sorted(wrong))


def test_seqk_keeps_a_dozen_modules_beside_its_subpackages_and_none_is_long():
    top = [p.name for p in SEQK.glob("*.py")]
    assert len(top) <= 12, top
    long = {module_name(p): n for p in SEQK.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 420 and p.name != "queries.py"}
    assert not long, f"modules past ~400 lines (split them by concept): {long}"


PROJECT_TESTS = {"test_house", "test_docs", "test_guide", "test_packaging", "test_notebook"}


def test_tests_mirror_the_packages_with_unique_names():
    tests = ROOT / "tests"
    top = {p.stem for p in tests.glob("test_*.py")}
    modules = {p.stem for p in SEQK.glob("*.py")}
    assert top - PROJECT_TESTS <= {f"test_{m}" for m in modules}, "a test of a package sits at the top of tests/"
    packages = {p.name for p in SEQK.iterdir() if (p / "__init__.py").exists()} | {"benchmarks"}
    folders = {p.parent.name for p in tests.glob("*/test_*.py")}
    assert folders <= packages, f"test folders that mirror no package: {sorted(folders - packages)}"
    names = [p.name for p in tests.rglob("test_*.py") if "fixtures" not in p.parts]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})


# Asking which kind of store a value names (a DuckDB file or a lake): only seqk/store/ does.
STORE_SWITCH = re.compile(r"\bis_lake\b|\bnames_lake\b|\bDuckDBFile\b|\blake\.Lake\b|seqk\.store\.(lake|file)\b"
                          r"|from seqk\.store import[^\n]*\b(lake|file)\b|isinstance\(\w*(db|target)\w*, (str|Path)")


def test_no_file_or_lake_switch_outside_the_database_classes():
    """Everything a DuckDB file and a lake do differently is a method of seqk.store.Database:
    nothing above seqk/store/ asks which one it holds."""
    found = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
             for path in SEQK.rglob("*.py") if "store" not in path.relative_to(SEQK).parts[:1]
             for n, line in enumerate(path.read_text().splitlines(), start=1) if STORE_SWITCH.search(line)]
    assert not found, "a file-or-lake switch outside seqk/store/:\n" + "\n".join(found)


# mypy over the whole tree takes ~45 s of CPU with no cache (a fresh checkout's first run, 3 s after):
# slow, so a plain `pytest` stays quick; CI and the README's test command run it.
@pytest.mark.parametrize("tool", [pytest.param(["ruff", "check", "seqk", "benchmarks", "tests", "bench"], id="ruff"),
                                  pytest.param(["mypy"], marks=pytest.mark.slow, id="mypy")])
def test_linters_are_clean(tool):
    done = subprocess.run([sys.executable, "-m", *tool], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
