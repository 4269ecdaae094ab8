"""What a run would do, before it spends anything: its id, its roles, and the
attempts and calls left, read from the database without writing to it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from seqk import store
from seqk.identity import differing_fields
from seqk.runspec import RunSpec
from seqk.sqlfiles import q


def plan(spec: RunSpec, db: str | Path | None = None) -> dict[str, Any]:
    """Run id, roles, fingerprint, state and the range of attempts and calls still to make."""
    selected = [t.task_index for t in spec.tasks]
    state, pending = "new run", {i: [1] if spec.seq else list(range(1, spec.k + 1)) for i in selected}
    path = store.default_db_path(db if db is not None else spec.db)
    if path.exists():
        with store.connect(path, read_only=True) as con:
            row = store.get_run(con, spec.run_id)
            if row is not None:
                changed = differing_fields(json.loads(row["fingerprint_fields"]),
                                           spec.fingerprint_fields())
                if changed:
                    state = "REFUSED: settings differ from the stored run: " + ", ".join(changed)
                elif spec.k < row["k"]:
                    state = f"REFUSED: k={spec.k} is smaller than the stored k={row['k']}"
                else:
                    generation = row["generation"]
                    if spec.k > row["k"] and not spec.continue_:
                        state, generation = f"restart at k={spec.k} (stored k={row['k']})", -1
                    elif spec.k > row["k"]:
                        state = f"extend k {row['k']}→{spec.k}"
                    else:
                        state = "resume"
                    pending = {}
                    for t, a in con.execute(q("pending_attempts"), {
                            "run_id": spec.run_id, "generation": generation, "k": spec.k,
                            "is_seq": spec.seq, "task_indices": selected}).fetchall():
                        pending.setdefault(t, []).append(a)
    if spec.seq:
        low = len(pending)
        high = sum(spec.k - idx[0] + 1 for idx in pending.values())
    else:
        low = high = sum(len(idx) for idx in pending.values())
    mode = spec.benchmark.feedback_mode(spec.feedback_mode)
    return {
        "run_id": spec.run_id, "state": state, "fingerprint": spec.fingerprint(),
        "roles": {"actor": spec.actor.model, "judge": spec.judge.model, "critic": spec.critic.model},
        "n_tasks": len(selected), "n_tasks_pending": len(pending),
        "attempts_min": low, "attempts_max": high,
        "critic_calls_max": high if (spec.seq and mode.llm_critic) else 0,
    }
