"""The docs say what the code does: where README.md and docs/*.md repeat the code (the variant
keys, the rule ids, the views' columns, the benchmarks' verifiers and feedback modes, the
commands), they are generated from it or checked against it here, and every link, path and
module they name exists. A change that makes a page false fails here, not in a reader's hands."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]


def section(text: str, heading: str) -> str:
    """The text under a markdown heading, up to the next heading of the same or a higher level."""
    level = len(heading) - len(heading.lstrip("#"))
    start = text.index(heading + "\n") + len(heading) + 1
    stop = re.compile(rf"^#{{1,{level}}} ", re.MULTILINE).search(text, start)
    return text[start:stop.start() if stop else len(text)]


def fenced_lines(text: str) -> list[str]:
    """Every line inside a ``` block."""
    lines, inside = [], False
    for line in text.splitlines():
        if line.strip().startswith("```"):
            inside = not inside
        elif inside:
            lines.append(line.strip())
    return lines


# --- variant keys and rule ids ------------------------------------------------------------


def test_variant_keys_page_is_what_the_generator_writes():
    from seqk.config.docs import variant_keys_markdown

    assert (DOCS / "variant-keys.md").read_text() == variant_keys_markdown(), (
        "docs/variant-keys.md is stale: python -m seqk.config.docs > docs/variant-keys.md")


def test_every_variant_key_has_a_docstring_and_a_row():
    from seqk.config.docs import SECTIONS, field_docstrings

    page = (DOCS / "variant-keys.md").read_text()
    for _, spelling, model in SECTIONS:
        docs = field_docstrings(model)
        for name, info in model.model_fields.items():
            assert docs.get(name), f"{model.__name__}.{name} has no docstring, so its row says nothing"
            key = spelling.format(key=info.alias or name, role="<role>")
            assert f"| `{key}` |" in page


def test_rule_ids_in_the_docs_are_those_of_the_code():
    from seqk.config import variant

    declared = set(re.findall(r"^\s+(C\d\d) ", variant.__doc__ or "", re.MULTILINE))
    documented = set(re.findall(r"`(C\d\d)`", section((DOCS / "variants.md").read_text(), "## Rule ids")))
    raised = {rule for path in [*ROOT.glob("seqk/**/*.py"), *ROOT.glob("benchmarks/**/*.py")]
              for rule in re.findall(r"""["'](C\d\d)["']""", path.read_text())}
    assert declared == {f"C{i:02d}" for i in range(1, len(declared) + 1)}, declared
    assert documented == declared, f"docs/variants.md lists {sorted(documented)}, the code {sorted(declared)}"
    assert raised <= declared, f"raised but not declared: {sorted(raised - declared)}"


# --- views ----------------------------------------------------------------------------------


def documented_columns(page: str) -> dict[str, list[str]]:
    """For every `### `name`` heading of docs/views.md, the first column of its table."""
    found = {}
    for match in re.finditer(r"^### `(\w+)`\n", page, re.MULTILINE):
        body = page[match.end():]
        table = re.search(r"^\| column \| meaning \|\n\|---\|---\|\n((?:\|.*\n)+)", body, re.MULTILINE)
        following = body.find("\n### ")
        assert table and table.start() < (following if following >= 0 else len(body)), (
            f"no column table under {match[1]}")
        found[match[1]] = re.findall(r"^\| `(\w+)` \|", table[1], re.MULTILINE)
    return found


def test_views_page_gives_every_view_its_real_columns(tmp_path):
    from seqk import store

    page = (DOCS / "views.md").read_text()
    documented = documented_columns(page)
    with store.connect(tmp_path / "seqk.duckdb") as con:
        views = {r[0] for r in con.execute(
            "SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
        macros = {r[0] for r in con.execute(
            "SELECT DISTINCT function_name FROM duckdb_functions() "
            "WHERE function_type IN ('macro', 'table_macro') AND NOT internal").fetchall()}
        assert views <= set(documented), f"views without a column table: {sorted(views - set(documented))}"
        for name, columns in documented.items():
            relation = name if name in views else f"{name}(false)"
            actual = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {relation}").fetchall()]
            assert columns == actual, f"{name}: docs/views.md says {columns}, the database has {actual}"
    undocumented = {m for m in macros if f"`{m}" not in page}
    assert not undocumented, f"macros docs/views.md does not name: {sorted(undocumented)}"


# --- benchmarks -----------------------------------------------------------------------------


def test_benchmark_table_matches_each_benchmarks_verifier_and_feedback_modes():
    from seqk.benchmark import discovery

    page = (DOCS / "benchmarks.md").read_text()
    rows = {m[1]: (m[2], m[3]) for m in re.finditer(r"^\| (\w+) \|[^|]*\| `(\w+)`[^|]*\|(.*)\|$", page, re.MULTILINE)}
    folders = {p.name for p in (ROOT / "benchmarks").iterdir()
               if (p / "__init__.py").exists() and not p.name.startswith("_")}
    assert set(rows) == folders, f"table rows {sorted(rows)}, benchmark folders {sorted(folders)}"
    for name, (verifier, modes) in rows.items():
        bench = discovery.get(name)
        assert verifier == bench.verifier, name
        listed = re.findall(r"(\*\*)?`(\w+)`", modes)
        assert [mode for _, mode in listed] == [m.name for m in bench.feedback_modes], name
        assert {mode for bold, mode in listed if bold} == {
            m.name for m in bench.feedback_modes if m.shows_grading_info}, f"{name}: bold = shows grading info"


# --- commands ---------------------------------------------------------------------------------


def test_every_command_has_an_example():
    import typer

    from seqk.cli import app

    commands = sorted(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
    assert len(commands) >= 13
    examples = fenced_lines((ROOT / "README.md").read_text() + "\n" + (DOCS / "cli.md").read_text())
    missing = [c for c in commands if not any(re.match(rf"seqk {c}( |$)", line) for line in examples)]
    assert not missing, f"commands with no example in README.md or docs/cli.md: {missing}"
    headed = set(re.findall(r"^### `seqk (\w+)`$", (DOCS / "cli.md").read_text(), re.MULTILINE))
    assert headed == set(commands), f"docs/cli.md sections {sorted(headed)}, commands {commands}"


# --- facts the docs copy from the code: the commands, the seed rule, export_dir's default ------------


def copies(marker: str) -> list[tuple[str, str]]:
    """(page, line) for every fenced line of README.md and docs/*.md that contains `marker`."""
    return [(page.name, line) for page in PAGES for line in fenced_lines(page.read_text()) if marker in line]


def test_every_copy_of_the_test_command_is_the_one_ci_runs():
    [ci] = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if "./install.sh test" in line]
    found = copies("./install.sh test")
    assert ("README.md", ci) in found
    assert all(line == ci for _, line in found), [c for c in found if c[1] != ci]


def test_every_copy_of_the_main_job_is_the_readmes():
    found = [(page, line) for page, line in copies("./install.sh &&")]
    [readme] = [line for page, line in found if page == "README.md"]
    assert len(found) >= 2 and all(line == readme for _, line in found), found


def test_the_seed_rule_is_stated_as_seqk_seeds_has_it():
    """The rule lives in seqk/seeds.py (seed_for). The old one (seed + attempt_index - 1 at every
    task) may be named only as the old rule, and a variant's comment on its `seed:` names seed_for."""
    files = [*PAGES, *sorted((ROOT / "variants").glob("*/*.yaml")), ROOT / "notebooks" / "seqk_compare.ipynb"]
    old = re.compile(r"seed \+ (t|attempt)")
    stale = [f"{f.name}: {line.strip()}" for f in files for line in f.read_text().splitlines()
             if old.search(line) and "old" not in line]
    assert not stale, stale
    for path in sorted((ROOT / "variants").glob("*/*.yaml")):
        for line in path.read_text().splitlines():
            if line.startswith("seed:") and "#" in line:
                assert "seqk.seeds.seed_for" in line, f"{path.parent.name}/{path.name}: {line}"


def test_export_dir_default_is_the_databases_folder_as_the_docs_say(tmp_path):
    from helpers import write_variant

    from seqk import api, models
    from seqk.config.docs import field_docstrings
    from seqk.config.variant import Variant

    models.register_mock("mock/docs", ["w1"])
    variant = write_variant(tmp_path, metric="pass@k", k=1, model="mock/docs", options={"n": 1})
    db = tmp_path / "elsewhere" / "results.duckdb"
    outcome = api.run_variant(variant, db)
    assert (db.parent / outcome.spec.run_id.split("/")[0]).is_dir()  # the run's tree, beside the file
    assert "the database's folder" in field_docstrings(Variant)["export_dir"]
    assert "into the database's folder" in (DOCS / "exports.md").read_text()
    said = [f"{p.name}: {line}" for p in PAGES for line in p.read_text().splitlines()
            if "beside the database" in line and ("export" in line or "runs/" in line)]
    assert not said, said


# --- links, paths, modules ------------------------------------------------------------------------


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.MULTILINE | re.DOTALL)
    return {slug(m[1]) for m in re.finditer(r"^#+ (.*)$", text, re.MULTILINE)}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_resolve(page):
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        resolved = (page.parent / file).resolve() if file else page
        if not resolved.exists() or (anchor and resolved.suffix == ".md" and anchor not in anchors(resolved)):
            broken.append(target)
    assert not broken, f"{page.name}: links that lead nowhere: {broken}"


PATH = re.compile(r"`((?:seqk|sql|benchmarks|bench|tests|notebooks|variants|docs)/[\w./-]*)`")
MODULE = re.compile(r"python -m ([\w.]+)")


# docs/adding-a-benchmark.md walks the reader through creating these.
MADE_BY_THE_READER = {"benchmarks/sums/__init__.py", "variants/sums/seqk.yaml", "variants/sums/passk.yaml"}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_paths_and_modules_named_exist(page):
    text = page.read_text()
    missing = [p for p in PATH.findall(text)
               if not (ROOT / p.rstrip("/")).exists() and p not in MADE_BY_THE_READER]
    missing += [f"python {p}" for p in re.findall(r"python (bench/\w+\.py)", text) if not (ROOT / p).exists()]
    missing += [f"python -m {m}" for m in MODULE.findall(text)
                if m not in ("venv", "pytest") and importlib.util.find_spec(m) is None]
    assert not missing, f"{page.name} names what does not exist: {missing}"


def test_readme_is_a_front_door():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines: move reference into docs/"


def test_every_variant_shown_in_the_docs_validates():
    import yaml

    from seqk.config.variant import Variant

    shown = [block for page in PAGES
             for block in re.findall(r"^```yaml\n(.*?)^```", page.read_text(), re.MULTILINE | re.DOTALL)
             if re.search(r"^metric:", block, re.MULTILINE)]
    assert len(shown) >= 3
    for block in shown:
        Variant.model_validate(yaml.safe_load(block))


# --- docs/treatment.md: the framing ablation runs as pasted ------------------------------------------


def seqk_commands(block: str) -> list[list[str]]:
    """The `seqk ...` lines of a bash block as argv (comments dropped), run by this interpreter."""
    import shlex
    import sys

    return [[sys.executable, "-m", "seqk", *shlex.split(line, comments=True)[1:]]
            for line in block.splitlines() if line.startswith("seqk ")]


def fences(text: str) -> list[tuple[str, str]]:
    """Every ``` block of a page, indented ones included: (its language, its body)."""
    found, lang, body = [], None, []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            if lang is None:
                lang, body = stripped[3:], []
            else:
                found.append((lang, "\n".join(body) + "\n"))
                lang = None
        elif lang is not None:
            body.append(line.strip())
    return found


def shown_lines(block: str) -> list[str]:
    """The lines of a shown output, stripped, without the `…` that stand for lines left out."""
    return [line.strip() for line in block.splitlines() if line.strip() not in ("", "…", "│", "│ …")]


@pytest.mark.slow
def test_the_treatment_guide_runs_as_pasted_and_shows_what_the_commands_print(tmp_path):
    import os
    import subprocess

    page = (DOCS / "treatment.md").read_text()
    ablation = section(page, "## A framing ablation, offline")
    blocks = fences(ablation)
    [commands] = [b for lang, b in blocks if lang == "bash"]
    [report] = [b for lang, b in blocks if lang == ""]
    env = dict(os.environ, SEQK_DB=str(tmp_path / "seqk.duckdb"))
    outputs = []
    for argv in seqk_commands(commands):
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, (argv, done.stderr[-2000:])
        outputs.append(done.stdout)
    plan, run, compare, sql = outputs
    assert "4 runs (3 cells, 1 pass@k partner)" in plan and "total: attempts 720 to 1440" in plan
    assert "4 of 4 runs done" in run
    printed = [line.strip() for line in compare.splitlines()]
    missing = [line for line in shown_lines(report) if line not in printed]
    assert not missing, f"docs/treatment.md shows report lines seqk report --compare does not print: {missing}"
    assert "+prompt-6a0ca001" in sql and "+prompt-6c09ea83" in sql
    # the sweep file shown is the one shipped
    sweep = re.search(r"^```yaml\n(# variants/arcagi2/framing.sweep.yaml.*?)^```", page, re.MULTILINE | re.DOTALL)
    assert sweep and sweep[1] == (ROOT / "variants" / "arcagi2" / "framing.sweep.yaml").read_text()


@pytest.mark.slow
def test_the_treatment_guides_plan_shows_what_plan_prints(tmp_path):
    import os
    import subprocess

    page = section((DOCS / "treatment.md").read_text(), "## The retry prompt")
    blocks = fences(page)
    [command] = [b for lang, b in blocks if lang == "bash"]
    [shown] = [b for lang, b in blocks if lang == ""]
    [argv] = seqk_commands(command)
    done = subprocess.run(argv, cwd=ROOT, env=dict(os.environ, SEQK_DB=str(tmp_path / "x.duckdb")),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    printed = [line.strip() for line in done.stdout.splitlines()]
    assert [line for line in shown_lines(shown) if line not in printed] == []


# --- paths named in the code's own comments and docstrings -----------------------------------

SOURCES = [*sorted(ROOT.glob("seqk/**/*.py")), *sorted(ROOT.glob("benchmarks/**/*.py")),
           *sorted(ROOT.glob("bench/*.py")), *sorted(ROOT.glob("sql/**/*.sql"))]
CODE_PATH = re.compile(r"(?<![\w/.-])((?:seqk|sql|benchmarks|bench|tests|notebooks|variants|docs)/[\w./-]*\w)")
# Named on purpose though absent from the tree: files a script writes, an example in a message.
NOT_IN_THE_TREE = {"bench/synthetic.duckdb", "variants/arcagi2/x.yaml", "bench/terminal-bench-2"}


def prose(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every comment and docstring of a Python file, or every `--` comment of SQL."""
    import ast
    import io
    import tokenize

    text = path.read_text()
    if path.suffix == ".sql":
        return [(i, line) for i, line in enumerate(text.splitlines(), 1) if line.lstrip().startswith("--")]
    found = [(tok.start[0], tok.string) for tok in tokenize.generate_tokens(io.StringIO(text).readline)
             if tok.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False)
            if doc and node.body:
                found.append((node.body[0].lineno, doc))
    return found


def test_paths_named_in_comments_and_docstrings_exist():
    missing = [f"{path.relative_to(ROOT)}:{line}: {name}"
               for path in SOURCES for line, text in prose(path) for name in CODE_PATH.findall(text)
               if not (ROOT / name).exists() and name not in NOT_IN_THE_TREE]
    assert not missing, "comments and docstrings name what does not exist (moved or renamed?):\n" + "\n".join(missing)
