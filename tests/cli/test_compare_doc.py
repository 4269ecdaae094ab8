"""docs/compare.md runs as written: each `$ ` command of its console blocks, pasted into a shell in a
checkout's root (here a temporary folder holding the repository's benchmarks/ and variants/), exits
0 and prints exactly the output the page shows under it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "compare.md"
CONSOLE = re.compile(r"^```console\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def steps() -> list[tuple[str, str]]:
    """(command, the output the page shows under it) in page order."""
    found: list[tuple[str, str]] = []
    for block in CONSOLE.findall(DOC.read_text()):
        for part in re.split(r"^\$ ", block, flags=re.MULTILINE)[1:]:
            command, _, output = part.partition("\n")
            found.append((command, output.rstrip("\n")))
    return found


def test_the_page_shows_the_three_questions_and_the_grouped_table():
    commands = [c for c, _ in steps()]
    assert len(commands) == 5 and commands[0].startswith("for v in cheap strong critic_sharp")
    assert sum(c.startswith("seqk compare ") for c in commands) == 3
    assert "seqk report --compare --by critic --db runs/compare.duckdb" in commands


def test_every_command_prints_what_the_page_shows(tmp_path):
    for name in ("benchmarks", "variants"):
        (tmp_path / name).symlink_to(REPO / name)
    env = os.environ | {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
                        "COLUMNS": "80"}
    env.pop("SEQK_DB", None)
    for command, expected in steps():
        done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, (command, done.stderr)
        shown = "\n".join(line.rstrip() for line in done.stdout.rstrip("\n").splitlines())
        assert shown == expected, command
