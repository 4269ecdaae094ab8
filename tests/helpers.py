"""Helpers the tests share: variants written to a temporary folder, rows read back as a user would.

Imported as `from helpers import ...` (tests/conftest.py puts this folder on sys.path); fixtures
stay in conftest.py."""

from __future__ import annotations

from pathlib import Path

from scripts import solves_on

from seqk import models
from seqk.config import runspec
from seqk.run import engine


def write_variant(folder: Path, name: str = "v.yaml", **keys) -> Path:
    """Write a variant YAML under folder/variants/<benchmark>/."""
    import yaml

    bench = keys.get("benchmark", "toy")
    path = folder / "variants" / bench / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(keys, sort_keys=False))
    return path


def copy_db(built: Path, to: Path) -> Path:
    """A copy at `to` of a database built once by a module- or session-scoped fixture (closed, so
    its file is whole), for one test to read or change as it likes."""
    import shutil

    shutil.copyfile(built, to)
    if built.with_name(built.name + ".wal").exists():
        shutil.copyfile(built.with_name(built.name + ".wal"), to.with_name(to.name + ".wal"))
    return to


def rows(db: Path, sql: str, params: list | dict | None = None) -> list[tuple]:
    """A read-only query's rows, opening and closing the database as a user's reader would."""
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql, params).fetchall() if params is not None else con.execute(sql).fetchall()


class UnusedRole:
    """A RoleClient a test expects never to be called (a deterministic verifier's judge)."""

    model = None

    def __init__(self, role: str) -> None:
        self.role = role

    async def complete(self, prompt: str) -> str:
        raise AssertionError(f"the {self.role} was called: {prompt[:80]!r}")


def context(bench, options=None, *, judge=None, critic=None, mode: str | None = None, **more):
    """An AttemptContext as the engine builds one for `bench`: its default options and feedback
    mode unless given, and judge and critic that must not be called unless given."""
    from seqk.benchmark import AttemptContext

    return AttemptContext(options=bench.Options() if options is None else options,
                          judge=judge or UnusedRole("judge"), critic=critic or UnusedRole("critic"),
                          mode=bench.feedback_mode(mode or bench.default_feedback_mode), **more)


# Runs built offline with the mock models (the toy benchmark of tests/toybench.py).


def make_run(tmp_path, db, **keys):
    """Run a toy variant offline with the mock models and return its spec."""
    keys = {"benchmark": "toy", "metric": "seq@k", "k": 3, "model": "mock/actor",
            "options": {"n": 3}, "retry": {"max_retries": 0, "base_delay_s": 0.0}} | keys
    spec = runspec.load(write_variant(tmp_path, **keys))
    engine.run(spec, db)
    return spec


def judge_says(prompt: str) -> str:
    """The toyjudge judge: YES when the quoted reply is the asked word."""
    reply, word = prompt.split("'")[1], prompt.split("the word ")[1].split("?")[0]
    return "YES" if reply == word else "NO"



def odd_tasks_right(prompt: str) -> str:
    word = prompt.split("Say the word ")[1].split(".")[0]
    return word if int(word[1:]) % 2 else "wrong"


def build_mock_db(folder: Path, db: Path) -> Path:
    """Two actor models × (pass@k, seq@k) on the toy benchmark, 5 tasks, K = 3.

    mock/alpha solves task i from attempt {1: 1, 2: 2, 3: 3}[i] on, so it gains from
    feedback: pass@3 = 1/5 (it only ever solves task 1 on a bare prompt), seq@3 = 3/5.
    mock/beta solves the odd tasks at once and never the even ones: pass@3 = seq@3 = 3/5.
    """
    register_mock_models()
    for model in ("mock/alpha", "mock/beta"):
        for metric in ("pass@k", "seq@k"):
            name = f"{model.split('/')[1]}-{metric[:-2]}.yaml"
            spec = runspec.load(write_variant(folder, name, benchmark="toy", metric=metric, k=3,
                                              model=model, options={"n": 5}))
            engine.run(spec, db)
    return db


def register_mock_models() -> None:
    """build_mock_db's two actors, mock/alpha and mock/beta."""
    models.register_mock("mock/alpha", solves_on({1: 1, 2: 2, 3: 3}))
    models.register_mock("mock/beta", odd_tasks_right)



def toy_arms(folder: Path, seq_model: str = "mock/actor", partner_model: str | None = None, n: int = 200,
             **keys) -> None:
    """A toy seq@k (binary feedback) and pass@k pair for studies: k = 3, seeded, priced."""
    common = dict(benchmark="toy", k=3, seed=1, concurrency=8, options={"n": n},
                  actor={"price": {"input": 1.0, "output": 2.0}}) | keys
    write_variant(folder, "seq.yaml", metric="seq@k", feedback_mode="binary", model=seq_model, **common)
    write_variant(folder, "pass.yaml", metric="pass@k", model=partner_model or seq_model, **common)


def toy_study_file(folder: Path, name: str = "study.yaml", **keys) -> Path:
    """A study file over toy_arms' two variants (seed 7 unless `keys` say)."""
    import yaml

    path = folder / name
    path.write_text(yaml.safe_dump({"arms": {"seq": "variants/toy/seq.yaml", "partner": "variants/toy/pass.yaml"},
                                    "seed": 7} | keys))
    return path


def toy_study(folder: Path, db: Path, lift: float = 0.3, **keys):
    """A finished study on the toy benchmark where feedback adds `lift` to a 0.3 success rate
    (seqk.api.run_study's outcome); `keys` go to the study file."""
    from scripts import feedback_world

    from seqk import api, models

    models.register_mock("mock/actor", feedback_world(0.3, lift))
    toy_arms(folder)
    return api.run_study(toy_study_file(folder, **keys), db, export=False, upload=False)


def synthetic_db(path: Path, **sizes) -> Path:
    """bench/make_synthetic_db.py's world at `path`, of the given sizes (models, tasks, k): pass@k
    and seq@k runs with four feedback modes (a critic among them), errored attempts, priced calls."""
    import sys

    bench = str(Path(__file__).resolve().parents[1] / "bench")
    sys.path.insert(0, bench)
    try:
        import make_synthetic_db
    finally:
        sys.path.remove(bench)
    make_synthetic_db.build(path, **sizes)
    return path
