"""What `seqk run` prints while it runs when no terminal reads it (nohup, a batch scheduler)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
import yaml
from procs import env
from typer.testing import CliRunner

from seqk.cli import app

LINE = re.compile(r"^progress (\d+):(\d\d):(\d\d): (\d+) of 28 attempts done; tasks (\d+) of 14 done "
                  r"\((\d+) passed, (\d+) failed, (\d+) with errors\); spent \$0\.0000 this invocation; "
                  r"eta (unknown|\d+:\d\d:\d\d)$")


@pytest.mark.slow
def test_a_run_into_a_pipe_prints_plain_progress_lines(tmp_path):
    variant = tmp_path / "variants" / "quickstart" / "slow.yaml"
    variant.parent.mkdir(parents=True)
    variant.write_text(yaml.safe_dump({"metric": "pass@k", "k": 2, "model": "mock/py:scripts:slow_wrong",
                                       "concurrency": 2}))
    e = env() | {"SEQK_PROGRESS_EVERY_S": "0.5"}
    proc = subprocess.run([sys.executable, "-m", "seqk", "run", str(variant), "--db", str(tmp_path / "s.duckdb"),
                           "--no-export"], env=e, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("progress ")]
    assert len(lines) >= 2, proc.stderr
    parsed = []
    for line in lines:
        m = LINE.match(line)
        assert m, line
        parsed.append(tuple(int(g) for g in m.groups()[3:8]))
    # Counts only grow, every finished task failed, and the later lines have an ETA.
    assert parsed == sorted(parsed)
    assert all(passed == 0 and tasks == failed for _, tasks, passed, failed, _ in parsed)
    assert "eta unknown" not in lines[-1]
    assert parsed[-1][0] > parsed[0][0]


def test_a_bad_progress_interval_is_one_error_line(tmp_path, monkeypatch):
    variant = tmp_path / "variants" / "quickstart" / "v.yaml"
    variant.parent.mkdir(parents=True)
    variant.write_text(yaml.safe_dump({"metric": "pass@k", "k": 1, "model": "mock/wrong"}))
    monkeypatch.setenv("SEQK_PROGRESS_EVERY_S", "soon")
    result = CliRunner().invoke(app, ["run", str(variant), "--db", str(tmp_path / "s.duckdb"), "--no-export"])
    assert result.exit_code == 2
    assert "error: SEQK_PROGRESS_EVERY_S should be a number of seconds above 0, got 'soon'" in result.output
    assert "Traceback" not in result.output
