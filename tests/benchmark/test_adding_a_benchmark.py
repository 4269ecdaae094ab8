"""docs/adding-a-benchmark.md runs as written: its one Python block, pasted as
benchmarks/sums/__init__.py into a benchmarks folder, and its two YAML blocks, as
variants/sums/seqk.yaml and its pass@k partner variants/sums/passk.yaml, are planned and run by
`seqk` in a subprocess, then compared with the page's own commands, whose figures it prints."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import duckdb
import pytest
from procs import seqk_from

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "adding-a-benchmark.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def blocks() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for language, body in FENCE.findall(DOC.read_text()):
        found.setdefault(language, []).append(body)
    return found


def test_the_page_holds_one_whole_benchmark_file_and_two_variants():
    found = blocks()
    assert len(found["python"]) == 1 and len(found["yaml"]) == 2
    assert len(found["python"][0].splitlines()) <= 40
    assert "\nbenchmark = " in found["python"][0]


def _seqk(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return seqk_from(root, *args, cwd=root)  # the temporary folder's `benchmarks` is the one seqk finds


@pytest.mark.slow
def test_the_documented_benchmark_runs_when_pasted(tmp_path):
    found = blocks()
    # A benchmarks folder as a newcomer's checkout has it, plus the new one.
    folder = tmp_path / "benchmarks"
    folder.mkdir()
    for entry in (REPO / "benchmarks").iterdir():
        if entry.name != "__pycache__":
            (folder / entry.name).symlink_to(entry)
    (folder / "sums").mkdir()
    (folder / "sums" / "__init__.py").write_text(found["python"][0])
    variant = tmp_path / "variants" / "sums" / "seqk.yaml"
    variant.parent.mkdir(parents=True)
    variant.write_text(found["yaml"][0])
    (variant.parent / "passk.yaml").write_text(found["yaml"][1])
    db = tmp_path / "seqk.duckdb"

    planned = _seqk(tmp_path, "plan", str(variant), "--db", str(db))
    assert planned.returncode == 0, planned.stderr
    assert planned.stdout.startswith("sums/seqk/mock__py:benchmarks.sums:mock_actor/deterministic/binary")
    assert "tasks selected: 4" in planned.stdout

    ran = _seqk(tmp_path, "run", str(variant), "--db", str(db))
    assert ran.returncode == 0, ran.stderr
    # What the page says the run prints.
    assert "6 attempts written" in ran.stdout and "4 passed, 0 failed, 0 with errors" in ran.stdout
    assert re.search(r"^\s+1\s+0\.500\s+\[0\.150, 0\.850\]\s+4\b", ran.stdout, re.MULTILINE), ran.stdout
    assert re.search(r"^\s+2\s+1\.000\s+\[0\.510, 1\.000\]\s+4\b", ran.stdout, re.MULTILINE), ran.stdout
    assert "ΔSeq@2 +0.500" in ran.stdout
    with duckdb.connect(str(db), read_only=True) as con:
        attempts = con.execute("SELECT task_index, attempt_index, success, feedback FROM attempts "
                               "ORDER BY 1, 2").fetchall()
    wrong = "Your previous answer was not correct."
    assert attempts == [(1, 1, False, wrong), (1, 2, True, None), (2, 1, True, None),
                        (3, 1, False, wrong), (3, 2, True, None), (4, 1, True, None)]

    # Section 4: the partner and the comparison, each command of the page as written.
    printed = ""
    for line in found["sh"][1].splitlines():
        words = shlex.split(line, comments=True)
        assert words[0] == "seqk", line
        done = _seqk(tmp_path, *words[1:], "--db", str(db))
        assert done.returncode == 0, (line, done.stderr)
        printed += done.stdout
    table = found["text"][0]
    for row in table.splitlines():
        assert " ".join(row.split()) in " ".join(printed.split()), row
    assert "what differs (a | b)" in printed and "flips" in printed
