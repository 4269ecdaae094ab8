"""docs/guide.md runs as pasted: its offline commands, in order, from the repository's root with
nothing on the path, print the figures it quotes; its power table is what seqk.stats computes; the
commands that need a provider's key name real commands and options; the quickstart's power line
is what `seqk plan` prints."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_docs import fences, shown_lines

ROOT = Path(__file__).resolve().parents[1]
GUIDE = (ROOT / "docs" / "guide.md").read_text()


def section(number: int) -> str:
    start = GUIDE.index(f"\n## {number}. ")
    return GUIDE[start:GUIDE.index("\n## ", start + 1)]


def commands(text: str) -> list[str]:
    """The `seqk ...` lines, comments cut, of every ```bash block in `text`."""
    blocks = re.findall(r"^```bash\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    return [line.split("#")[0].strip() for block in blocks for line in block.splitlines()
            if line.startswith("seqk ")]


def seqk(command: str, db: Path) -> subprocess.CompletedProcess:
    """`command` as a user runs it from the repository's root: the console script beside this
    Python (else the module), no PYTHONPATH, the database in a folder of the test's own."""
    script = shutil.which("seqk", path=str(Path(sys.executable).parent))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SEQK_DB")} | {"SEQK_DB": str(db)}
    argv = ([script] if script else [sys.executable, "-m", "seqk"]) + command.split()[1:]
    return subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def quoted(text: str, start: str) -> list[str]:
    """The `...` phrases of `text` that start with `start` (a line break in one reads as a space)."""
    prose = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    phrases = [" ".join(q.split()) for q in re.findall(r"`([^`]+)`", prose)]
    return [q for q in phrases if q.startswith(start)]


def outputs(text: str) -> list[list[str]]:
    """The lines of each output block (a ``` block with no language) of `text`, in order."""
    return [shown_lines(body) for lang, body in fences(text) if lang == ""]


def printed_in_order(shown: list[str], stdout: str) -> list[str]:
    """The shown lines that the command did not print, in the order shown, as lines (spaces at the
    ends aside): empty when the block quotes what the command prints."""
    lines, at, missing = [line.strip() for line in stdout.splitlines()], 0, []
    for line in shown:
        if line in lines[at:]:
            at = lines.index(line, at) + 1
        else:
            missing.append(line)
    return missing


@pytest.mark.slow
def test_the_guides_offline_commands_run_as_pasted_and_print_what_it_quotes(tmp_path):
    db = tmp_path / "seqk.duckdb"
    power, tour = section(2), section(3)
    planned, ran = commands(power), commands(tour)
    assert planned == ["seqk plan variants/arcagi2/equal-budget.seqk.yaml --lift 0.1"]
    assert [c.split()[:2] for c in ran] == [["seqk", "run"], ["seqk", "run"], ["seqk", "report"]]
    out = seqk(planned[0], db)
    assert out.returncode == 0, out.stderr
    [shown_plan] = outputs(power)
    assert len(shown_plan) == 3 and printed_in_order(shown_plan, out.stdout) == [], out.stdout
    assert not db.exists()  # plan writes nothing
    printed = []
    for command in ran:
        done = seqk(command, db)
        assert done.returncode == 0, f"{command}: {done.stderr}"
        printed.append(done.stdout)
    # The tour quotes the seq@k run's curve (the second command) and the report's equal-budget block.
    shown_run, shown_report = outputs(tour)
    assert len(shown_run) == 7 and len(shown_report) == 8
    assert printed_in_order(shown_run, printed[1]) == [], printed[1]
    assert printed_in_order(shown_report, printed[2]) == [], printed[2]
    assert "  seq@t" in printed[-1] and "$/task" in printed[-1]  # the lines section 5 explains
    assert (tmp_path / "arcagi2-evaluation").is_dir()  # exported into the database's folder, as it says


def test_the_power_table_is_what_seqk_power_computes():
    from seqk import power

    table = GUIDE.split("<!-- power table")[1].split("\n\n")[0]
    rows = re.findall(r"^\| (\d+) \| ([\d.]+|none) \| ([\d.]+|none) \|$", table, re.MULTILINE)
    assert len(rows) >= 5

    def shown(n: int, discordance: float) -> str:
        lift = power.detectable_lift(n, discordance)
        return "none" if lift is None else f"{lift:.3f}"

    expected = [(n, shown(int(n), 0.15), shown(int(n), 0.3)) for n, _, _ in rows]
    assert [tuple(r) for r in rows] == expected, "docs/guide.md's power table should read:\n" + "\n".join(
        f"| {n} | {a} | {b} |" for n, a, b in expected)
    needs = re.search(r"a lift of 0\.05 needs (\d+) tasks at ψ = 0\.3", " ".join(GUIDE.split()))
    assert needs and int(needs[1]) == power.tasks_needed(0.05, 0.3)


def test_the_commands_that_need_a_key_are_real_commands_with_real_options():
    from typer.testing import CliRunner

    from seqk.cli import app

    found = commands(section(4))
    assert len(found) >= 4
    for command in found:
        name, *rest = command.split()[1:]
        shown = CliRunner().invoke(app, [name, "--help"], env={"COLUMNS": "200"})
        assert shown.exit_code == 0, command
        for option in (word for word in rest if word.startswith("--")):
            assert option in shown.output, (command, option)
        for path in (word for word in rest if word.endswith(".yaml")):
            assert path.startswith("variants/arcagi2/mine.")  # the two files the section shows
    shown_files = re.findall(r"^# (variants/arcagi2/mine\.\w+\.yaml)$", section(4), re.MULTILINE)
    assert sorted(shown_files) == ["variants/arcagi2/mine.passk.yaml", "variants/arcagi2/mine.seqk.yaml"]


@pytest.mark.native
def test_the_quickstarts_power_line_is_what_plan_prints_before_the_pair_has_run(tmp_path):
    quickstart = section(6)
    [command] = commands(quickstart)
    done = seqk(command, tmp_path / "seqk.duckdb")
    assert done.returncode == 0, done.stderr
    [line] = quoted(quickstart, "smallest detectable lift")
    assert line in " ".join(done.stdout.split())
