"""How long a variant that cannot run takes to be refused (issue 28.6): `seqk plan` and `seqk run`
of a variant with a missing key (openai/gpt-4o-mini without $OPENAI_API_KEY), a misspelled
provider (openaii/gpt-4o-mini), and a batched anthropic/ model without the `anthropic` SDK
(blocked in the child as if the `batch` extra were not installed). Each is a fresh process and a
fresh database; the figure is the median wall time and the median CPU time of the process (CPU
moves far less than wall when other jobs share the cores), with the refusal's first line.

    python bench/bench_refusal.py                      # this checkout, 5 runs of each
    python bench/bench_refusal.py --checkout /work/main # another checkout's code, the same way
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = """
import sys
if sys.argv[1] == "--no-anthropic":
    sys.modules["anthropic"] = None
    del sys.argv[1]
from seqk.cli import main
sys.argv[0] = "seqk"
main()
"""

BASE = "benchmark: arcagi2\nk: 3\nmax_tasks: 10\noptions:\n  split: evaluation\n"
CASES = {
    "missing key": ("metric: seq@k\nmodel: openai/gpt-4o-mini\n", False),
    "misspelled provider": ("metric: seq@k\nmodel: openaii/gpt-4o-mini\n", False),
    "batch SDK missing": ("metric: seq@k\nmodel: anthropic/claude-sonnet-4-6\nbatch: true\nmax_tokens: 64\n", True),
}


def once(checkout: Path, command: str, variant: Path, no_anthropic: bool, folder: Path,
         timeout_s: float) -> tuple[float, float, str, int | None]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "PYTHONPATH")}
    env["ANTHROPIC_API_KEY"] = "sk-bench"  # the batch case has its key: only the SDK is missing
    env["PYTHONPATH"] = str(checkout)
    db = folder / f"run-{time.monotonic_ns()}.duckdb"
    args = [sys.executable, "-c", CHILD, *(["--no-anthropic"] if no_anthropic else []),
            command, str(variant), "--db", str(db)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(args, cwd=checkout, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        _, stderr = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:  # main's batch run without its SDK never returned
        proc.kill()
        proc.communicate()
        return time.perf_counter() - start, float("nan"), f"still running after {timeout_s:.0f} s: killed", None
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    first = (stderr.strip().splitlines() or [""])[0]
    return wall, cpu, first, proc.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkout", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=90.0, help="seconds before a run is killed")
    args = parser.parse_args()
    print(f"checkout {args.checkout}; load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, (keys, no_anthropic) in CASES.items():
            variant = folder / f"{name.replace(' ', '-')}.yaml"
            variant.write_text(BASE + keys)
            for command in ("plan", "run"):
                runs = [once(args.checkout, command, variant, no_anthropic, folder, args.timeout)
                        for _ in range(args.repeat)]
                wall = statistics.median(r[0] for r in runs)
                cpu = statistics.median(r[1] for r in runs)
                registered = any(p.suffix == ".duckdb" for p in folder.iterdir())
                print(f"{name:20} seqk {command:4}  wall {wall:5.2f} s  cpu {cpu:5.2f} s  exit {runs[0][3]}  "
                      f"database {'created' if registered else 'none'}  | {runs[0][2][:110]}")
                for p in folder.glob("run-*"):
                    p.unlink()
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
