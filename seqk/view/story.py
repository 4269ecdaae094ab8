"""The data of a task's page: the story of its attempts, and the partner run's samples of
the same task, as typed records read in one short read-only open."""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from typing import Any

from seqk import store
from seqk.analysis.status import AttemptRow, attempts_with_calls
from seqk.errors import NotFound
from seqk.records import stored_chat, transcript
from seqk.store import queries
from seqk.view.pages import WAIT_S

_FENCE = re.compile(r"```[a-z]*\s*(.*?)```", re.S)


@dataclass(frozen=True)
class AttemptView:
    """One attempt as `seqk inspect` reads it (`row`: seqk.analysis.status.AttemptRow, the one
    declaration of a stored attempt's fields, its calls included, for analysis and viewer), with
    what the page derives from it."""

    row: AttemptRow
    prompt_delta: list[str]
    """The lines of this prompt that the previous counted attempt's prompt did not hold (for
    attempt 1: what it adds to the task's prompt): what this attempt saw that the last did not."""
    output_grid: list[list[list[int]]] | None
    """The output's grids when it is one or several ARC grids (JSON of 0-9 cells), else None."""
    messages: list[dict[str, str]] | None = None
    """A chat prompt's messages ({role, content}, in order): a run whose retry protocol has a
    system message or shows the history as messages; None for one user message."""

    @property
    def verdict(self) -> str:
        """PASS, FAIL or ERROR."""
        if self.row["status"] == "error":
            return "ERROR"
        return "PASS" if self.row["success"] else "FAIL"

    @property
    def input_tokens(self) -> int:
        return sum(c["input_tokens"] or 0 for c in self.row["calls"])

    @property
    def output_tokens(self) -> int:
        return sum(c["output_tokens"] or 0 for c in self.row["calls"])

    @property
    def cost_usd(self) -> float | None:
        """Summed over priced calls; None when no call was priced."""
        priced = [c["cost_usd"] for c in self.row["calls"] if c["cost_usd"] is not None]
        return sum(priced) if priced else None

    @property
    def latency_s(self) -> float:
        return sum(c["latency_s"] or 0.0 for c in self.row["calls"])

    @property
    def retries(self) -> int:
        return sum(c["retries"] for c in self.row["calls"])


@dataclass(frozen=True)
class PartnerSamples:
    """The other run's attempts at the same task (pass@k samples beside a seq@k story)."""

    run_id: str
    metric: str
    attempts: list[AttemptView]
    same_task: bool
    """False when the partner's task of this index has other content: not the same task."""


@dataclass(frozen=True)
class TaskPage:
    """`/runs/<run_id>/tasks/<task_index>`: one task's story."""

    run: dict[str, Any]
    task_index: int
    task_id: str
    prompt: str
    attempts: list[AttemptView]
    partner: PartnerSamples | None
    previous_index: int | None
    """The run's task before this one (its registered indices need not be contiguous)."""
    next_index: int | None
    protocol: dict[str, Any] | None = None
    """The run's retry protocol when it is not the seed's (its settings, `differs`, `chat`)."""

    @property
    def protocol_text(self) -> str:
        """What the page names of a protocol other than the seed's: the settings that differ."""
        if not self.protocol:
            return ""
        return ", ".join(f"{name} {json.dumps(self.protocol.get(name), ensure_ascii=False)}"
                         for name in self.protocol.get("differs", []))

    @property
    def first_success(self) -> int | None:
        return next((a.row["attempt_index"] for a in self.attempts if a.row["counts"] and a.row["success"]), None)


def prompt_delta(previous: str, current: str) -> list[str]:
    """The lines of `current` that are not in `previous` (inserted or replaced)."""
    old, new = previous.splitlines(), current.splitlines()
    added: list[str] = []
    for op, _, _, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if op in ("insert", "replace"):
            added.extend(new[j1:j2])
    return added


def _is_grid(value: Any) -> bool:
    return (isinstance(value, list) and bool(value) and all(
        isinstance(row, list) and row and all(isinstance(c, int) and 0 <= c <= 9 for c in row)
        for row in value))


def output_grids(output: str | None) -> list[list[list[int]]] | None:
    """The output's ARC grids, when the whole output (or its first ``` block) is one grid or a
    list of grids."""
    if not output:
        return None
    fenced = _FENCE.search(output)
    text = fenced.group(1) if fenced else output.strip()
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if _is_grid(value):
        return [value]
    if isinstance(value, list) and value and all(_is_grid(v) for v in value):
        return value
    return None


def _protocol(run: dict[str, Any]) -> dict[str, Any] | None:
    config = run.get("config")
    config = json.loads(config) if isinstance(config, str) else config or {}
    return config.get("prompt")


def _attempts(rows: list[AttemptRow], task_prompt: str, chat: bool = False) -> list[AttemptView]:
    out: list[AttemptView] = []
    previous = task_prompt
    for r in rows:
        messages = stored_chat(r["prompt"]) if chat else None
        prompt = transcript(messages) if messages else r["prompt"] or ""
        out.append(AttemptView(r, prompt_delta(previous, prompt), output_grids(r["output"]), messages))
        if r["counts"]:
            previous = prompt
    return out


def read_attempts(con: Any, run_id: str, task_index: int, task_prompt: str) -> list[AttemptView]:
    """One task's attempts in one run, with their calls, on an open connection (the compare pages
    read two runs' in one open)."""
    return _attempts(attempts_with_calls(con, run_id, task_index), task_prompt)


def task_page(run_id: str, task_index: int, db: store.DbLike = None) -> TaskPage:
    """One task's attempts in order, with the partner run's attempts at the same task."""
    database = store.open(db)
    with database.connect(read_only=True, wait_s=WAIT_S) as con:
        run = store.get_run(con, run_id)
        if run is None:
            raise NotFound(f"no run {run_id!r} in {database}")
        identities = store.task_identities(con, run_id)
        tasks = queries.find_task(con, run_id=run_id, task_index=task_index, task_id=None)
        if not tasks:
            raise NotFound(f"run {run_id} has no task {task_index} (it has {len(identities)} tasks)")
        task = tasks[0]
        rows = attempts_with_calls(con, run_id, task_index)
        partners = queries.view_partners(con, run_id=run_id)
        partner = None
        if partners:
            other = partners[0]["pass_run_id" if run["metric"] == "seq@k" else "seq_run_id"]
            other_ids = store.task_identities(con, other)
            same = other_ids.get(task_index, (None, None))[1] == identities[task_index][1]
            other_run = store.get_run(con, other)
            partner_rows = attempts_with_calls(con, other, task_index) if same else []
            partner = PartnerSamples(other, other_run["metric"] if other_run else "",
                                     _attempts(partner_rows, task["prompt"]), same)
    before = [i for i in identities if i < task_index]
    after = [i for i in identities if i > task_index]
    protocol = _protocol(run)
    return TaskPage(run=run, task_index=task_index, task_id=task["task_id"], prompt=task["prompt"],
                    attempts=_attempts(rows, task["prompt"], bool(protocol and protocol.get("chat"))),
                    partner=partner, previous_index=max(before, default=None),
                    next_index=min(after, default=None), protocol=protocol)
