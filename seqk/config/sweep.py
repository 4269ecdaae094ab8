"""A sweep file: one base variant and a matrix over its keys; every cell an ordinary run.

    base: ../arcagi2/seqk.binary.yaml     # relative to this file
    matrix:
      model: [openai/gpt-4o-mini, anthropic/claude-haiku-4-5]
      feedback_mode: [binary, cell_match]
    partners: true                        # one pass@k run per combination of the other factors
    set: {max_tasks: 20}                  # optional: overrides every cell shares

A file is a sweep when it holds `matrix:`. Each cell is the base with the cell's values set as
overrides (seqk.config.overrides: dotted keys, YAML values), validated as a variant: a problem
names the sweep file and the factor that caused it. `partners: true` adds, for each combination
of the factors other than the feedback (feedback_mode, critic_model, critic.*, prompt.*), one
pass@k run that shares everything else with its seq@k cells (slice, actor, k, verifier, judge),
so `seqk report --compare` pairs them. Cells that the run id cannot tell apart (a factor such as
actor.temperature that no slot names) get a `tag` made of their values, so each is a run of its
own; two cells that would be the same run are refused.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import Any

import yaml

from seqk.config.spec import RunSettings, RunSpec, load_with_settings
from seqk.config.variant import read_yaml
from seqk.errors import ConfigError, ConfigIssue

FEEDBACK_KEYS = ("feedback_mode", "critic_model", "critic", "prompt")
"""The factors a pass@k partner does not share with its seq@k cells (the treatment)."""
PARTNER: dict[str, Any] = {"metric": "pass@k", "feedback_mode": None, "critic_model": None, "critic": {}, "prompt": {},
           "chains": 1}
"""What makes a cell's pass@k partner: the bare task, k samples, the benchmark's default mode."""
SWEEP_KEYS = ("base", "matrix", "partners", "set")
_TAG_CHARS = re.compile(r"[^A-Za-z0-9._+-]")


def is_feedback_factor(key: str) -> bool:
    """True for a matrix key that is part of the treatment (a partner does not share it)."""
    return key.split(".")[0] in FEEDBACK_KEYS


def is_sweep(path: str | Path) -> bool:
    """True when `path` is a YAML mapping with a `matrix:` key (a file that does not read is no
    sweep: loading it as a variant says why)."""
    try:
        return "matrix" in read_yaml(Path(path))
    except ConfigError:
        return False


def shown(value: Any) -> str:
    """A factor's value as a cell's name and a command line write it: YAML that reads back as
    the same value (a string that YAML would read otherwise, "null" or "0.2", is quoted)."""
    if isinstance(value, str):
        try:
            if yaml.safe_load(value) == value:
                return value
        except yaml.YAMLError:
            pass
    return json.dumps(value, ensure_ascii=False)


def shown_path(path: Path) -> str:
    """`path` relative to the current folder when it lies under it, else as it is."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


@dataclass(frozen=True)
class Cell:
    """One run of a sweep: its factor values, its overrides of the base, and the run they make."""

    values: dict[str, Any]
    """The matrix's values for this cell (a partner: its non-feedback factors)."""
    overrides: dict[str, Any]
    spec: RunSpec
    settings: RunSettings
    partner: bool = False
    """True for a pass@k partner added by `partners: true`."""

    @property
    def name(self) -> str:
        """`model=x feedback_mode=y`, prefixed `pass@k partner:` for a partner."""
        text = " ".join(f"{k}={shown(v)}" for k, v in self.values.items()) or "(the base)"
        return f"pass@k partner: {text}" if self.partner else text

    def command(self, base: Path) -> str:
        """The `seqk run` command line that runs this cell alone (from the current folder)."""
        sets = [f"--set {shlex.quote(f'{key}={shown(value)}')}" for key, value in self.overrides.items()]
        return " ".join(["seqk run", shlex.quote(shown_path(base)), *sets])


@dataclass
class Sweep:
    """A sweep file, read and checked: its base and every cell, partners included."""

    path: Path
    base: Path
    matrix: dict[str, list[Any]]
    cells: list[Cell] = field(default_factory=list)


def _structure(path: Path, data: dict[str, Any]) -> tuple[Path, dict[str, list[Any]], bool, dict[str, Any]]:
    def bad(where: str, message: str) -> ConfigError:
        return ConfigError(str(path), [ConfigIssue("C14", where, message)])

    for key in data:
        if key not in SWEEP_KEYS:
            raise bad(str(key), f"unknown key: a sweep file holds {', '.join(SWEEP_KEYS)} (the variant's "
                                "keys go in its base, or in `set:`)")
    base = data.get("base")
    if not isinstance(base, str) or not base:
        raise bad("base", "expected the path of a variant YAML, relative to this file")
    base_path = (path.parent / base).resolve()
    if not base_path.is_file():
        raise bad("base", f"{base} is not a file (looked for {base_path})")
    matrix = data.get("matrix")
    if not isinstance(matrix, dict) or not matrix:
        raise bad("matrix", "expected a mapping of variant keys (dotted keys allowed) to lists of values")
    for key, values in matrix.items():
        if not isinstance(values, list) or not values:
            raise bad(f"matrix.{key}", f"expected a non-empty list of values (got {shown(values)})")
        if len({json.dumps(v, sort_keys=True, default=str) for v in values}) != len(values):
            raise bad(f"matrix.{key}", "a value is listed twice")
        if key.split(".")[0] in SWEEP_KEYS or key in ("continue", "db"):
            raise bad(f"matrix.{key}", "not a factor a sweep can vary")
    partners = data.get("partners", False)
    if not isinstance(partners, bool):
        raise bad("partners", f"expected true or false (got {shown(partners)})")
    common = data.get("set") or {}
    if not isinstance(common, dict):
        raise bad("set", "expected a mapping of variant keys (dotted keys allowed) to values")
    return base_path, matrix, partners, common


def load_sweep(path: str | Path, overrides: dict[str, Any] | None = None,
               labels: dict[str, str] | None = None) -> Sweep:
    """Read a sweep file and resolve every cell against its benchmark, before anything runs.
    `overrides` (e.g. from `--set`) apply to every cell, after the file's `set:`. Every cell's
    problems are raised together, naming the sweep file."""
    path = Path(path)
    base, matrix, partners, common = _structure(path, read_yaml(path))
    keys = list(matrix)
    combos = [dict(zip(keys, values, strict=True)) for values in product(*matrix.values())]
    wanted: list[tuple[dict[str, Any], bool]] = [(combo, False) for combo in combos]
    if partners:
        seen: list[dict[str, Any]] = []
        for combo in combos:
            shared = {k: v for k, v in combo.items() if not is_feedback_factor(k)}
            if shared not in seen:
                seen.append(shared)
                wanted.append((shared, True))
    issues: list[ConfigIssue] = []
    cells: list[Cell] = []
    for values, partner in wanted:
        cell_overrides = {**common, **(overrides or {}), **values, **(PARTNER if partner else {})}
        cell_labels = {**{k: f"set.{k}" for k in common}, **(labels or {}),
                       **{k: f"matrix.{k} = {shown(v)}" for k, v in values.items()}}
        try:
            spec, settings = load_with_settings(base, cell_overrides, cell_labels)
        except ConfigError as exc:
            issues += [i for i in exc.issues if i not in issues]
            continue
        cells.append(Cell(values, cell_overrides, spec, settings, partner))
    if issues:
        raise ConfigError(str(path), issues)
    return Sweep(path, base, matrix, _distinct(path, base, cells, labels or {}))


def _setting(spec: RunSpec) -> tuple[Any, ...]:
    """What one run is: same run id and same setting, same run."""
    return (spec.fingerprint(), spec.k, spec.chains, tuple(t.task_index for t in spec.tasks))


def _distinct(path: Path, base: Path, cells: list[Cell], labels: dict[str, str]) -> list[Cell]:
    """The cells with a run of their own each: a partner that is already a cell is dropped; cells
    the run id cannot tell apart get a tag of the values that tell them apart; two cells that are
    the same run are refused (a factor that changes nothing here)."""
    out: list[Cell] = []
    for cell in cells:
        same = [c for c in out if c.spec.run_id == cell.spec.run_id]
        if any(_setting(c.spec) == _setting(cell.spec) for c in same):
            if cell.partner:
                continue
            twin = next(c for c in same if _setting(c.spec) == _setting(cell.spec))
            raise ConfigError(str(path), [ConfigIssue(
                "C14", "matrix", f"cells {twin.name!r} and {cell.name!r} are one run ({cell.spec.run_id}): "
                "a factor they differ in changes nothing in this variant")])
        out.append(cell)
    groups: dict[str, list[int]] = {}
    for n, cell in enumerate(out):
        groups.setdefault(cell.spec.run_id, []).append(n)
    for members in groups.values():
        if len(members) < 2:
            continue
        differing = [k for k in out[members[0]].values
                     if len({shown(out[m].values.get(k)) for m in members}) > 1]
        for m in members:
            cell = out[m]
            tag = "+".join(_TAG_CHARS.sub("_", f"{k}-{shown(cell.values[k])}") for k in differing)
            if cell.spec.run_id.rpartition("@")[1]:
                tag = f"{cell.spec.run_id.rpartition('@')[2]}+{tag}"
            tag = tag[:64]
            overrides = {**cell.overrides, "tag": tag}
            cell_labels = {**labels, **{k: f"matrix.{k} = {shown(v)}" for k, v in cell.values.items()}}
            spec, settings = load_with_settings(base, overrides, cell_labels)
            out[m] = Cell(cell.values, overrides, spec, settings, cell.partner)
    return out
