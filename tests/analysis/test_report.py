"""`seqk report` as a user types it, on runs a mock model produced; the HTML page in
headless Chromium; the PNG."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from helpers import write_variant
from typer.testing import CliRunner

from seqk import models
from seqk.cli import app
from seqk.config import runspec
from seqk.run import engine

runner = CliRunner()
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def report(*args: str):
    return runner.invoke(app, ["report", *args])


def test_report_table_has_one_row_per_run(mock_db):
    result = report("--db", str(mock_db))
    assert result.exit_code == 0, result.output
    out = result.output
    for run_id in ("toy-plain/seqk/mock__alpha/deterministic/binary",
                   "toy-plain/passk/mock__beta/deterministic/binary"):
        assert run_id in out
    assert "0.60 [0.23, 0.88]" in out  # alpha seq@3 = 3/5 with its Wilson interval
    assert "bootstrap (2000 resamples, seed" in out


def test_report_compare_puts_seq_and_pass_side_by_side(mock_db):
    result = report("--compare", "--format", "markdown", "--db", str(mock_db))
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("| toy-plain")]
    assert len(lines) == 2  # one row per (benchmark, model, feedback mode)
    alpha = next(line for line in lines if "mock/alpha" in line)
    # @3: seq 3/5 beside pass 1/5; lift +0.40 with 2 flips in seq's favour.
    assert "seq 0.60 [0.23, 0.88]<br>pass 0.20 [0.04, 0.62]" in alpha
    assert "+0.40 [" in alpha and "+2/−0" in alpha


def test_report_json_and_csv_carry_the_numbers(mock_db):
    result = report("toy-plain/seqk/mock__alpha/*", "--format", "json", "--db", str(mock_db))
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    (run,) = data["runs"]
    assert [p["value"] for p in run["curve"]] == pytest.approx([0.2, 0.4, 0.6])
    assert run["delta"]["value"] == pytest.approx(0.4) and run["delta"]["n"] == 5
    assert run["lift"]["difference"]["value"] == pytest.approx(0.4)
    assert run["lift"]["b_run_id"] == "toy-plain/passk/mock__alpha/deterministic/binary"
    assert run["spend"]["input_tokens"] > 0 and run["spend"]["cost_usd"] == 0.0
    csv_out = report("--model", "mock/beta", "--format", "csv", "--db", str(mock_db)).output
    header, *rows = csv_out.splitlines()
    assert len(rows) == 2 and "value_at_3" in header.split(",")
    assert {"lift_interval", "framing_vs"} <= set(header.split(","))
    assert run["lift"]["interval"] == "score" and run["framing_vs"] == "pass@1 (Chen mean)"


def test_two_runs_get_a_paired_comparison(mock_db):
    result = report("toy-plain/seqk/mock__alpha/*", "toy-plain/seqk/mock__beta/*",
                    "--db", str(mock_db))
    assert result.exit_code == 0, result.output
    # alpha solves 1, 2, 3; beta solves 1, 3, 5: on 5 shared tasks, 1 each way.
    assert "paired at t=3 on 5 shared tasks" in result.output
    assert "1 solved only by the first, 1 only by the second" in result.output


def test_two_runs_are_compared_in_the_order_they_are_named(tmp_path, db):
    """`seqk report A B` gives A − B, and says so, whichever id sorts first."""
    from scripts import solves_on

    models.register_mock("mock/zeta", solves_on({1: 1, 2: 1, 3: 1}))
    models.register_mock("mock/alpha", solves_on({1: 1}))
    ids = {}
    for name in ("zeta", "alpha"):
        spec = runspec.load(write_variant(tmp_path, f"{name}.yaml", metric="seq@k", k=1, model=f"mock/{name}",
                                          options={"n": 4}))
        engine.run(spec, db)
        ids[name] = spec.run_id
    for first, second, sign in (("zeta", "alpha", "+0.50"), ("alpha", "zeta", "-0.50")):
        out = report(ids[first], ids[second], "--db", str(db))
        assert out.exit_code == 0, out.output
        assert (f"paired at t=1 on 4 shared tasks, the first run minus the second: {ids[first]} − "
                f"{ids[second]} = {sign} [") in out.output


def test_filters_and_unknown_runs(mock_db):
    result = report("--benchmark", "nope", "--db", str(mock_db))
    assert result.exit_code == 2 and "no run matches" in result.output
    result = report("missing/run", "--db", str(mock_db))
    assert result.exit_code == 2 and "no run matches 'missing/run'" in result.output
    result = report("--format", "xml", "--db", str(mock_db))
    assert result.exit_code == 2


def test_errors_as_failures_changes_the_figures(tmp_path, db):
    from seqk.errors import TransientProviderError

    def flaky(prompt):
        if "w2" in prompt:
            raise TransientProviderError("503 overloaded", status_code=503)
        return prompt.split("Say the word ")[1].split(".")[0] if "w1" in prompt else "wrong"

    models.register_mock("mock/actor", flaky)
    spec = runspec.load(write_variant(tmp_path, benchmark="toy", metric="seq@k", k=2,
                                      model="mock/actor", options={"n": 3},
                                      retry={"max_retries": 0, "base_delay_s": 0.0}))
    engine.run(spec, db)
    censored = json.loads(report("--format", "json", "--db", str(db)).output)["runs"][0]
    failed = json.loads(report("--format", "json", "--errors-as-failures", "--db", str(db))
                        .output)["runs"][0]
    # Task 2 errored on attempt 1: its chain is censored at 0 (Kaplan-Meier: 1 solved of the 2 at
    # risk, and task 2 valued at that chance), or a failure (1 of 3); the range says both ends.
    assert [p["n_tasks"] for p in censored["curve"]] == [3, 3]
    assert [p["value"] for p in censored["curve"]] == pytest.approx([0.5, 0.5])
    assert [p["value_if_failures"] for p in censored["curve"]] == pytest.approx([1 / 3, 1 / 3])
    assert [p["value_if_successes"] for p in censored["curve"]] == pytest.approx([2 / 3, 2 / 3])
    assert [p["value"] for p in failed["curve"]] == pytest.approx([1 / 3, 1 / 3])
    assert censored["n_error_attempts"] == 1
    table = report("--db", str(db)).output
    assert "1 errored attempt(s) in 1 run(s): censor their chains" in table
    assert "range    seq@t if errors were failures / successes, t = 1..2: [0.33, 0.67] ·" in table
    assert table.count("[0.33, 0.67]") == 2  # each range whole, one per t


@pytest.mark.slow
def test_report_imports_neither_altair_nor_litellm(mock_db):
    code = ("import sys; from seqk.cli import app; from typer.testing import CliRunner; "
            f"r = CliRunner().invoke(app, ['report', '--db', {str(mock_db)!r}]); "
            "assert r.exit_code == 0, r.output; "
            "print(sorted(m for m in ('litellm', 'altair', 'boto3') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.slow  # vl-convert's PNG (~3 s of CPU)
def test_png_is_written(mock_db, tmp_path):
    png = tmp_path / "report.png"
    result = report("--compare", "--png", str(png), "--db", str(mock_db))
    assert result.exit_code == 0, result.output
    width, height, colours = png_colours(png)
    assert width > 400 and height > 400 and len(colours) > 10


# ---------------------------------------------------------------------------
# The HTML page in a real browser


def chromium(page: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """Headless Chromium on a local file, offline, console messages logged to stderr."""
    profile = tmp_path / f"chromium-profile-{len(list(tmp_path.iterdir()))}"
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
               "--no-first-run", "--disable-background-networking", "--disable-component-update",
               "--disable-sync", "--hide-scrollbars", f"--user-data-dir={profile}",
               "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000", *args,
               page.as_uri()]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def console_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def png_colours(path: Path) -> tuple[int, int, set[bytes]]:
    """Width, height and the distinct colours (sampling every 7th pixel) of an 8-bit RGB(A)
    PNG: a tiny decoder, so the test needs no imaging library."""
    import numpy as np

    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
    assert header is not None
    width, height, depth, colour_type, _, _, interlace = header
    assert depth == 8 and colour_type in (2, 6) and interlace == 0, header
    bpp = 3 if colour_type == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    previous = np.zeros(stride, dtype=np.int64)
    colours: set[bytes] = set()
    for y in range(height):
        start = y * (stride + 1)
        kind = raw[start]
        line = np.frombuffer(raw, dtype=np.uint8, count=stride, offset=start + 1).astype(np.int64)
        if kind == 1:  # Sub: a running sum per channel
            line = np.cumsum(line.reshape(width, bpp), axis=0).reshape(-1) % 256
        elif kind == 2:  # Up
            line = (line + previous) % 256
        elif kind in (3, 4):  # Average, Paeth: each byte depends on the one just decoded
            out = [0] * stride
            for i in range(stride):
                a = out[i - bpp] if i >= bpp else 0
                b = int(previous[i])
                c = int(previous[i - bpp]) if i >= bpp else 0
                if kind == 3:
                    pred = (a + b) // 2
                else:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                out[i] = (int(line[i]) + pred) % 256
            line = np.array(out, dtype=np.int64)
        pixels = line.astype(np.uint8).reshape(width, bpp)[::7, :3]
        colours.update(bytes(p) for p in pixels)
        previous = line
    return width, height, colours


@pytest.fixture
def browser():
    # The README's test command installs Debian's chromium: without it this fails, never skips.
    assert Path(CHROMIUM).exists(), "Debian chromium is required: apt-get install -y chromium"
    return CHROMIUM


def test_console_check_catches_errors(browser, tmp_path):
    page = tmp_path / "broken.html"
    page.write_text("<html><body><script>console.error('boom');</script></body></html>")
    assert console_lines(chromium(page, tmp_path, "--dump-dom").stderr)


@pytest.mark.slow
def test_html_report_renders_offline_in_chromium(browser, mock_db, tmp_path):
    page = tmp_path / "report.html"
    result = report("--compare", "--html", str(page), "--db", str(mock_db))
    assert result.exit_code == 0, result.output
    text = page.read_text()
    assert "cdn.jsdelivr" not in text and "<script src=" not in text  # Vega is inlined
    dom = chromium(page, tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert console_lines(dom.stderr) == []
    rendered = dom.stdout
    assert 'class="marks"' in rendered  # vega-embed drew the charts
    for title in ("seq@t and pass@t on success", "Feedback lift per benchmark",
                  "Success against spend"):
        assert title in rendered
    assert rendered.count("mark-line") >= 2 and "mark-area" in rendered
    shot = tmp_path / "shot.png"
    taken = chromium(page, tmp_path, f"--screenshot={shot}", "--window-size=1000,1400")
    assert taken.returncode == 0 and shot.exists(), taken.stderr[-2000:]
    width, height, colours = png_colours(shot)
    assert (width, height) == (1000, 1400)
    assert len(colours) > 20  # not a blank page


def test_a_p_value_is_never_printed_across_005():
    from seqk.analysis.report import fmt_p

    assert fmt_p(0.0496) == "0.0496" and fmt_p(0.0504) == "0.05" and fmt_p(0.13361) == "0.13"
    assert fmt_p(0.04999999) == "0.04999999" and fmt_p(1.2e-7) == "1.2e-07"
