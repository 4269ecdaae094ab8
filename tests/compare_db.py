"""The database of docs/compare.md, made by real runs of its variants (variants/clbench/demo.*.yaml,
the synthetic CL-bench world of benchmarks/clbench/demo.py: priced mock actors, critics and judge,
60 tasks): a cheap model's seq@k run with 4 chains and binary feedback, a strong model's pass@k
run with k = 1, and three socratic critics (sharp, vague, half) of the cheap model."""

from __future__ import annotations

from pathlib import Path

import yaml

from seqk.config import spec as runspec
from seqk.run import scheduler as engine

REPO = Path(__file__).resolve().parents[1]
VARIANTS = ("cheap", "strong", "critic_sharp", "critic_vague", "critic_half")


def variant(name: str) -> Path:
    """The variant file of docs/compare.md for `name` (one of VARIANTS)."""
    return REPO / "variants" / "clbench" / f"demo.{name}.yaml"


def build(folder: Path, db: Path, names: tuple[str, ...] = VARIANTS) -> dict[str, str]:
    """Run the variants into `db` (their data file found from any working folder); run ids by name."""
    ids = {}
    for name in names:
        keys = yaml.safe_load(variant(name).read_text())
        keys["benchmark"] = "clbench"
        keys["options"]["data_path"] = str(REPO / keys["options"]["data_path"])
        path = folder / "variants" / "clbench" / f"demo.{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(keys, sort_keys=False))
        spec = runspec.load(path)
        result = engine.run(spec, db)
        assert not result.stopped and not result.attempts_errored, result
        ids[name] = spec.run_id
    return ids
