"""The report's figures before and after a change: the same commands over the same databases, their
output compared (JSON within 1e-12 relative for floats, text byte for byte).

    python bench/golden_report.py build /tmp/golden                 # the small worlds, once
    /work/venv/bin/python bench/golden_report.py run /tmp/golden --label main    # main's code
    python bench/golden_report.py run /tmp/golden --label new       # this checkout's code
    python bench/golden_report.py diff /tmp/golden main new         # exit 1 on a difference
    ... run /tmp/golden --label new --big /tmp/synthetic-1m.duckdb  # the 1M database too

`run` executes each command with the interpreter running this script (`python -m seqk ...`), so
the seqk it measures is that interpreter's: run it once with the reference checkout's venv and once
with the changed one. The worlds (`build`) are what the report's estimators must get right: errors
censoring chains and superseded by valid rows, holes, unpriced calls and calls without tokens, an
older generation (tests/random_runs.py); a world where feedback does nothing with 4 chains, a
feedback_mode none partner and 10% errors (bench/null_world.py), and a tiny one ("too few tasks");
a k-extension, a partial run, seeded runs, chains, errors from the provider, an unpriced model
(real mock runs, below); the CL-bench demo of docs/compare.md (critics, priced, 4 chains); the
viewer's world (tests/view_db.py); a small synthetic database (bench/make_synthetic_db.py).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RELATIVE = 1e-12
"""Floats equal within this relative difference between two checkouts (a change may add in another
order). One checkout against itself is byte for byte the same since the SQL's sums are exact_sum's
(sql/views.sql): `diff` of two labels of the same code shows it."""


# ---------------------------------------------------------------------------
# The worlds


def _engine_world(folder: Path, db: Path) -> None:
    """Real mock runs of the toy benchmark: a seeded seq@k run with 3 chains extended from k = 3 to
    k = 5 (`continue: true`), its feedback_mode none partner, a seeded pass@k partner (k = 8) and an
    unseeded one, a partial run (max_tasks), a hint run; ~6% of calls fail for good; the actor priced
    for some runs, an unpriced model for others."""
    from helpers import write_variant
    from scripts import _uniform, word_of

    from seqk import models
    from seqk.config import runspec
    from seqk.errors import PermanentProviderError
    from seqk.run import engine

    def actor(prompt: str, seed: int | None = None) -> str:
        word = word_of(prompt)
        key = (word, seed, prompt.count("<Feedback"), len(prompt))
        if _uniform("error", *key) < 0.06:
            raise PermanentProviderError("400 rejected for good", status_code=400)
        p = 0.15 + 0.6 * _uniform("task", word) + (0.15 if "<Feedback" in prompt else 0.0)
        return word if _uniform(*key) < p else f"not-{word}"

    models.register_mock("mock/actor", actor)
    models.register_mock("mock/free", actor)
    price = {"price": {"input": 1.0, "output": 2.0}}
    common = {"benchmark": "toy", "options": {"n": 40}, "retry": {"max_retries": 0, "base_delay_s": 0.0},
              "concurrency": 8}
    runs: list[tuple[str, dict[str, Any]]] = [
        ("seq-k3", {"metric": "seq@k", "k": 3, "chains": 3, "seed": 1, "model": "mock/actor", "actor": price}),
        ("seq-k3", {"metric": "seq@k", "k": 5, "chains": 3, "seed": 1, "model": "mock/actor", "actor": price,
                    "continue": True}),
        ("none", {"metric": "seq@k", "k": 5, "chains": 3, "seed": 1, "model": "mock/actor", "actor": price,
                  "feedback_mode": "none"}),
        ("pass", {"metric": "pass@k", "k": 8, "seed": 1, "model": "mock/actor", "actor": price}),
        ("hint-partial", {"metric": "seq@k", "k": 4, "seed": 2, "model": "mock/actor", "actor": price,
                          "feedback_mode": "hint", "max_tasks": 25}),
        ("free-seq", {"metric": "seq@k", "k": 4, "model": "mock/free"}),
        ("free-pass", {"metric": "pass@k", "k": 6, "model": "mock/free"}),
    ]
    for name, keys in runs:
        spec = runspec.load(write_variant(folder, f"{name}.yaml", **(common | keys)))
        engine.run(spec, db)


def build(folder: Path) -> None:
    """Write every world into folder/worlds (skipping those that exist)."""
    # appended: tests/benchmarks must not shadow the repository's benchmarks package
    sys.path[:0] = [str(REPO)]
    sys.path += [str(REPO / "tests"), str(REPO / "bench")]
    from toybench import ToyBench

    from seqk import models
    from seqk.benchmark import discovery

    discovery.registry()["toy"] = ToyBench()
    worlds = folder / "worlds"
    worlds.mkdir(parents=True, exist_ok=True)

    def fresh(name: str) -> Path | None:
        path = worlds / f"{name}.duckdb"
        if path.exists():
            return None
        print(f"building {path}", flush=True)
        return path

    import null_world
    import random_runs
    from make_synthetic_db import build as synthetic

    for seed in (1, 2, 3):
        if path := fresh(f"random-{seed}"):
            random_runs.random_db(path, seed)
    if path := fresh("null"):
        null_world.write(path, null_world.World(), replicates=2, seed=3)
    if path := fresh("null-tiny"):
        null_world.write(path, null_world.World(n_tasks=9, chains=2, k=3, pass_k=6, error_rate=0.2),
                         replicates=1, seed=4)
    if path := fresh("synth-small"):
        synthetic(path, models=2, tasks=60, k=5)
    with tempfile.TemporaryDirectory() as scratch:
        if path := fresh("engine"):
            models.clear_mocks()
            _engine_world(Path(scratch) / "engine", path)
        if path := fresh("clbench"):
            import compare_db

            compare_db.build(Path(scratch) / "clbench", path)
        if path := fresh("view"):
            import view_db

            models.clear_mocks()
            view_db.build(Path(scratch) / "view", path)


# ---------------------------------------------------------------------------
# The commands


def _run_ids(db: Path) -> list[tuple[str, str]]:
    """(run_id, metric) of every run in `db`, in order."""
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        return [(str(r), str(m)) for r, m in con.execute("SELECT run_id, metric FROM runs ORDER BY run_id").fetchall()]


def commands(db: Path, small: bool) -> dict[str, list[str]]:
    """name -> seqk arguments, for one database."""
    base = ["--db", str(db)]
    out = {"compare.json": ["report", "--compare", "--format", "json"],
           "compare.txt": ["report", "--compare"]}
    if not small:
        return {name: args + base for name, args in out.items()}
    out |= {"compare-failures.json": ["report", "--compare", "--format", "json", "--errors-as-failures"],
            "compare-seed7.json": ["report", "--compare", "--format", "json", "--seed", "7"],
            "compare.csv": ["report", "--compare", "--format", "csv"],
            "compare.md": ["report", "--compare", "--format", "markdown"],
            "runs.json": ["report", "--format", "json"]}
    for axis in ("model", "feedback"):
        out[f"by-{axis}.json"] = ["report", "--compare", "--by", axis, "--format", "json"]
    runs = _run_ids(db)
    seq = [r for r, m in runs if m == "seq@k"]
    pass_ = [r for r, m in runs if m == "pass@k"]
    pairs = []
    if seq and pass_:
        pairs.append((seq[0], pass_[0]))
    if len(seq) >= 2:
        pairs.append((seq[0], seq[-1]))
    if len(seq) >= 3:
        pairs.append((seq[1], seq[2]))
    for i, (a, b) in enumerate(pairs):
        out[f"pair{i}.json"] = ["report", a, b, "--format", "json"]
        out[f"seqk-compare{i}.json"] = ["compare", a, b, "--format", "json"]
        out[f"seqk-compare{i}-failures.json"] = ["compare", a, b, "--format", "json", "--errors-as-failures"]
    return {name: args + base for name, args in out.items()}


def run(folder: Path, label: str, big: Path | None, only: str | None) -> None:
    """Run every command into folder/<label>/<world>/<name>, with the CPU time of each."""
    dbs = sorted((folder / "worlds").glob("*.duckdb"))
    if big is not None:
        dbs.append(big)
    timings: dict[str, float] = {}
    for db in dbs:
        world = "big" if db == big else db.stem
        if only and only not in world:
            continue
        target = folder / label / world
        target.mkdir(parents=True, exist_ok=True)
        for name, args in commands(db, small=db != big).items():
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "seqk", *args], capture_output=True, text=True,
                                  cwd=folder)
            timings[f"{world}/{name}"] = time.perf_counter() - start
            (target / name).write_text(done.stdout if done.returncode == 0 else
                                       f"exit {done.returncode}\n{done.stdout}\n{done.stderr[-2000:]}")
            print(f"{world}/{name}: exit {done.returncode}, {timings[f'{world}/{name}']:.1f} s", flush=True)
    (folder / label / "timings.json").write_text(json.dumps(timings, indent=1))


# ---------------------------------------------------------------------------
# The comparison


def _differences(a: Any, b: Any, where: str, out: list[str], worst: list[float]) -> None:
    """Append where a and b differ (floats within RELATIVE) to `out`; worst[0] the largest
    relative difference among floats that are within it."""
    if isinstance(a, float) and isinstance(b, float | int) or isinstance(b, float) and isinstance(a, int):
        a, b = float(a), float(b)
        if math.isnan(a) and math.isnan(b) or a == b:
            return
        scale = max(abs(a), abs(b))
        relative = abs(a - b) / scale if scale else 0.0
        if relative <= RELATIVE:
            worst[0] = max(worst[0], relative)
            return
        out.append(f"{where}: {a!r} != {b!r}")
    elif type(a) is not type(b):
        out.append(f"{where}: {a!r} != {b!r}")
    elif isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                out.append(f"{where}.{key}: only in {'the second' if key in b else 'the first'}")
            else:
                _differences(a[key], b[key], f"{where}.{key}", out, worst)
    elif isinstance(a, list):
        if len(a) != len(b):
            out.append(f"{where}: {len(a)} items != {len(b)}")
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            _differences(x, y, f"{where}[{i}]", out, worst)
    elif a != b:
        out.append(f"{where}: {a!r} != {b!r}")


def _csv(path: Path) -> list[dict[str, Any]]:
    """A CSV's rows with its numbers as numbers (its floats carry every digit, so compare them as
    floats)."""
    import csv

    def number(text: str) -> Any:
        try:
            return int(text)
        except ValueError:
            try:
                return float(text)
            except ValueError:
                return text

    with path.open() as rows:
        return [{key: number(value) for key, value in row.items()} for row in csv.DictReader(rows)]


def diff(folder: Path, first: str, second: str) -> bool:
    """Compare two labels' outputs; print each difference; True when they agree."""
    agree, worst, compared = True, [0.0], 0
    for path in sorted((folder / first).rglob("*")):
        if not path.is_file() or path.name == "timings.json":
            continue
        other = folder / second / path.relative_to(folder / first)
        name = str(path.relative_to(folder / first))
        if not other.exists():
            print(f"{name}: missing in {second}")
            agree = False
            continue
        compared += 1
        if path.suffix == ".json" and not path.read_text().startswith("exit "):
            try:
                a, b = json.loads(path.read_text()), json.loads(other.read_text())
            except json.JSONDecodeError as error:
                print(f"{name}: not JSON ({error})")
                agree = False
                continue
            found: list[str] = []
            _differences(a, b, "", found, worst)
            for line in found[:20]:
                print(f"{name}{line}")
            agree &= not found
        elif path.suffix == ".csv":
            found = []
            _differences(_csv(path), _csv(other), "", found, worst)
            for line in found[:20]:
                print(f"{name}{line}")
            agree &= not found
        elif path.read_bytes() != other.read_bytes():
            digest = [hashlib.sha1(p.read_bytes()).hexdigest()[:10] for p in (path, other)]
            print(f"{name}: text differs ({digest[0]} != {digest[1]})")
            agree = False
    print(f"{compared} outputs compared: {'the same' if agree else 'DIFFERENT'}; largest relative "
          f"difference among equal floats {worst[0]:.1e}")
    return agree


def main() -> None:
    """build | run | diff."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("build").add_argument("folder", type=Path)
    runner = sub.add_parser("run")
    runner.add_argument("folder", type=Path)
    runner.add_argument("--label", required=True)
    runner.add_argument("--big", type=Path, help="also the 1M synthetic database (slow)")
    runner.add_argument("--only", help="only worlds whose name contains this")
    differ = sub.add_parser("diff")
    differ.add_argument("folder", type=Path)
    differ.add_argument("first")
    differ.add_argument("second")
    args = parser.parse_args()
    if args.command == "build":
        build(args.folder)
    elif args.command == "run":
        run(args.folder.resolve(), args.label, args.big.resolve() if args.big else None, args.only)
    else:
        sys.exit(0 if diff(args.folder, args.first, args.second) else 1)


if __name__ == "__main__":
    main()
