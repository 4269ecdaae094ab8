"""The studies a database holds, for the report and the viewer: each study's declaration and its
confidence sequence at every look (what seqk.run.study recorded; nothing is recomputed here)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from seqk import store
from seqk.records import StudyUpdate
from seqk.store import queries


@dataclass
class StudySummary:
    """One study and its looks."""

    study_id: str
    seq_run_id: str
    partner_run_id: str
    question: str
    alpha: float
    margin: float
    seed: int
    n_available: int
    budget_usd_per_task: float | None
    looks: list[StudyUpdate] = field(default_factory=list)

    @property
    def last(self) -> StudyUpdate | None:
        """The latest look."""
        return self.looks[-1] if self.looks else None

    def path(self) -> list[tuple[int, float, float]]:
        """(tasks in the sequence, low, high) at each look with tasks: the sequence against tasks done."""
        return [(look.n_tasks, look.low, look.high) for look in self.looks if look.n_tasks]


def studies(db: store.DbLike, run_ids: list[str] | None = None) -> list[StudySummary]:
    """Every study in the database (those with an arm among `run_ids`, when given), oldest first;
    [] when the database has no studies table yet (made before schema 8 and never opened since)."""
    database = store.open(db)
    if not database.exists():
        return []
    with database.connect(read_only=True) as con:
        return studies_in(con, run_ids)


def studies_in(con: Any, run_ids: list[str] | None = None) -> list[StudySummary]:
    """`studies` over an open connection."""
    found = [s for s in queries.list_studies(con)
             if run_ids is None or s["seq_run_id"] in run_ids or s["partner_run_id"] in run_ids]
    return [_summary(s, [StudyUpdate.from_row(r) for r in queries.study_updates_of(con, study_id=s["study_id"])])
            for s in found]


def _summary(row: dict[str, Any], looks: list[StudyUpdate]) -> StudySummary:
    order = row["task_order"]
    return StudySummary(row["study_id"], row["seq_run_id"], row["partner_run_id"], row["question"],
                        row["alpha"], row["margin"], row["order_seed"],
                        len(json.loads(order) if isinstance(order, str) else order),
                        row["budget_usd_per_task"], looks)
