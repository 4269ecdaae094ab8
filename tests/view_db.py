"""A database made by real mock runs for the viewer's tests: a seq@k run whose feedback mode
leaks grading data (hint), a blind one (binary), and their pass@k partner, on 6 toy tasks
that cover every filter of a run's task table (a 7th waits for a larger max_tasks)."""

from __future__ import annotations

from pathlib import Path

from helpers import write_variant
from scripts import attempt_of, word_of

from seqk import models
from seqk.config import runspec
from seqk.errors import PermanentProviderError
from seqk.run import engine

K = 3
LONG_OUTPUT = "\n".join(f"def step_{i}(x):\n    return x + {i}" for i in range(30))


def actor(prompt: str) -> str:
    """Task 1 never solved (a long program), 2 solved by seq@k's attempt 2, 3 always, 4 only
    by a pass@k sample, 5 errors on seq@k's attempt 1, 6 answers a wrong ARC grid."""
    task = int(word_of(prompt)[1:])
    attempt = attempt_of(prompt)  # None for a pass@k sample: no "This is attempt t of K."
    if task == 1:
        return LONG_OUTPUT
    if task == 2:
        return "w2" if attempt is not None and attempt >= 2 else "w-two?"
    if task == 3:
        return "w3"
    if task == 4:
        return "w4" if attempt is None else "four"
    if task == 5 and attempt == 1:
        raise PermanentProviderError("400 bad request: prompt rejected", status_code=400)
    if task == 6:
        return "[[1, 2], [3, 0]]"
    return "no idea"


def build(folder: Path, db: Path) -> dict[str, str]:
    """Run the three variants into `db`; returns their run ids by name (seq, seq_binary, pass)."""
    models.register_mock("mock/actor", actor)
    ids = {}
    for name, metric, mode in (("seq", "seq@k", "hint"), ("seq_binary", "seq@k", "binary"),
                               ("pass", "pass@k", "binary")):
        spec = runspec.load(write_variant(folder, f"{name}.yaml", benchmark="toy", metric=metric, k=K,
                                          feedback_mode=mode, model="mock/actor", options={"n": 7},
                                          max_tasks=6))
        engine.run(spec, db)
        ids[name] = spec.run_id
    return ids


def copied(built: tuple[Path, dict[str, str]], db: Path) -> tuple[Path, dict[str, str]]:
    """A copy at `db` of a database `build` made once (a module-scoped fixture's), with the mock
    actor registered again (tests/conftest.py clears mocks before each test)."""
    from helpers import copy_db

    models.register_mock("mock/actor", actor)
    return copy_db(built[0], db), built[1]


def build_once(folder: Path) -> tuple[Path, dict[str, str]]:
    """`build` into folder/seqk.duckdb, for a module-scoped fixture (set up before the toy
    benchmarks are registered for the test)."""
    from toybench import register_toys

    register_toys()
    return folder / "seqk.duckdb", build(folder, folder / "seqk.duckdb")
