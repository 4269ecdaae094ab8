"""docs/your-own-benchmark.md runs as pasted: its shell blocks, in order, in an empty folder, with
the `seqk` the tests use; the report excerpt it shows is what `seqk report --compare` printed, and
the error it shows for a broken row is the one `seqk plan` prints."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # shell blocks that start seqk processes

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "your-own-benchmark.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def blocks(language: str) -> list[str]:
    return [body for lang, body in FENCE.findall(DOC.read_text()) if lang == language]


def shell(folder: Path, script: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEQK_")}
    # The `seqk` next to this interpreter: the one a user's venv puts on PATH.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=600)


def test_the_page_runs_as_pasted_from_a_jsonl_to_the_report(tmp_path):
    data, variants, commands = blocks("sh")
    assert shell(tmp_path, data).returncode == 0
    assert len((tmp_path / "sums.jsonl").read_text().splitlines()) == 8
    assert shell(tmp_path, variants).returncode == 0
    done = shell(tmp_path, commands)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "sums/seqk/mock__py:benchmarks.dataset.smoke:arithmetic/numeric/format" in out
    assert "tasks selected: 8" in out
    (excerpt,) = [b for b in blocks("text") if "lift" in b]
    shown = [line.strip() for line in excerpt.splitlines() if line.strip() and line.strip() != "…"]
    printed = [line.strip() for line in out.splitlines()]
    missing = [line for line in shown if line not in printed]
    assert not missing, f"the page shows lines the report did not print: {missing}\n{out[-3000:]}"


def test_the_broken_row_the_page_shows_is_what_seqk_prints(tmp_path):
    data, variants, _ = blocks("sh")
    shell(tmp_path, data)
    shell(tmp_path, variants)
    path = tmp_path / "sums.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    lines[2] = lines[2].replace('?", "answer"', '?" "answer"')  # row 3 loses a comma
    path.write_text("".join(lines))
    done = shell(tmp_path, "seqk plan variants/sums.seqk.yaml")
    assert done.returncode == 2
    (shown,) = [b.strip() for b in blocks("text") if "record: expected" in b]
    assert shown in done.stderr.splitlines()
