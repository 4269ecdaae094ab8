"""Random runs written row by row, with what real runs hold and what they rarely do: errors
superseded by a valid row or ending a chain, slots that never ran (holes), calls paid for whose
attempt was never written, an older generation, unpriced calls and calls without token counts,
four chains; the tests of the estimates (tests/store, tests/analysis) check identities on them."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

from seqk import store

T0 = datetime(2026, 1, 1)


def _run(con, run_id: str, metric: str, k: int, chains: int, generation: int) -> None:
    con.execute(
        "INSERT INTO run_rows (run_id, benchmark, slice, metric, k, chains, generation, feedback_mode, "
        "actor_model, verifier, fingerprint, fingerprint_fields, created_at, updated_at, seqk_version) "
        "VALUES (?, 'toy', 'toy-plain', ?, ?, ?, ?, 'binary', 'mock/a', 'deterministic', 'fp', '{}', "
        "?, ?, 'test')", [run_id, metric, k, chains, generation, T0, T0])


class _Writer:
    def __init__(self, con, rng: random.Random) -> None:
        self.con, self.rng, self.clock = con, rng, 0
        self.attempt_rows: list[list] = []
        self.call_rows: list[list] = []

    def write(self) -> None:
        """The rows, in the order they were made, one INSERT a table from an Arrow table (binding
        parameters row by row took most of the time), with the values every row shares."""
        import pyarrow as pa

        keys = ("attempt_uid", "run_id", "generation", "task_index", "chain_index", "attempt_index")
        for table, columns, rows, same in (
                ("attempts", (*keys, "status", "success", "score", "error", "started_at", "finished_at"),
                 self.attempt_rows, {"k": "4"}),
                ("calls", (*keys, "call_index", "input_tokens", "cost_usd", "started_at"), self.call_rows,
                 {"role": "'actor'", "model": "'mock/a'", "output_tokens": "3", "retries": "0"})):
            self.con.register("new_rows", pa.table({name: [row[i] for row in rows] for i, name in enumerate(columns)}))
            self.con.execute(f"INSERT INTO {table} ({', '.join([*columns, *same])}) "
                             f"SELECT *, {', '.join(same.values())} FROM new_rows")
            self.con.unregister("new_rows")

    def calls(self, uid: str, run_id: str, generation: int, task: int, chain: int, slot: int,
              priced: bool) -> None:
        """One to three calls (actor, judge, critic), some unpriced, some without token counts."""
        for call in range(1, self.rng.randint(1, 3) + 1):
            cost = round(self.rng.random(), 3) if priced and self.rng.random() < 0.9 else None
            tokens = None if self.rng.random() < 0.1 else self.rng.randint(1, 60)
            self.call_rows.append([uid, run_id, generation, task, chain, slot, call, tokens, cost, T0])

    def attempt(self, run_id: str, generation: int, task: int, chain: int, slot: int, status: str,
                success: bool | None, priced: bool = True) -> None:
        self.clock += 1
        uid = f"{run_id}#{generation}#{task}#{chain}#{slot}#{self.clock}"
        at = T0 + timedelta(seconds=self.clock)
        self.attempt_rows.append(
            [uid, run_id, generation, task, chain, slot, status, success,
             None if success is None else float(success),
             '{"stage": "actor"}' if status == "error" else None, at, at])
        self.calls(uid, run_id, generation, task, chain, slot, priced)


def _seq_run(w: _Writer, run_id: str, k: int, n_tasks: int, chains: int, priced: bool) -> None:
    rng = w.rng
    for task in range(1, n_tasks + 1):
        p = rng.random()
        for chain in range(1, chains + 1):
            for slot in range(1, k + 1):
                if rng.random() < 0.05:  # a hole: this slot never ran (a run in progress)
                    continue
                if rng.random() < 0.2:  # an error, superseded by a valid row or where it stopped
                    w.attempt(run_id, 2, task, chain, slot, "error", None, priced)
                    if rng.random() < 0.4:
                        break
                if rng.random() < 0.05:  # paid for, killed before its attempt was written
                    w.calls(f"lost#{run_id}#{task}#{chain}#{slot}", run_id, 2, task, chain, slot, priced)
                    break
                success = rng.random() < p
                w.attempt(run_id, 2, task, chain, slot, "ok", success, priced)
                if success:
                    break
        if rng.random() < 0.3:  # an older generation, which must not count
            w.attempt(run_id, 1, task, 1, 1, "ok", True, priced)


def random_db(path: Path, seed: int) -> None:
    """Two one-chain seq@k runs (one never priced), a pass@k run and a four-chain seq@k run."""
    rng = random.Random(seed)
    with store.connect(path) as con:
        w = _Writer(con, rng)
        for run_id, metric, k, chains in (("seq1", "seq@k", 4, 1), ("seq_unpriced", "seq@k", 3, 1),
                                          ("pass", "pass@k", 5, 1), ("seq4", "seq@k", 3, 4)):
            _run(con, run_id, metric, k, chains, generation=2)
        _seq_run(w, "seq1", 4, 14, 1, priced=True)
        _seq_run(w, "seq_unpriced", 3, 8, 1, priced=False)
        _seq_run(w, "seq4", 3, 6, 4, priced=True)
        for task in range(1, 13):
            p = rng.random()
            for sample in range(1, 6):
                if rng.random() < 0.08:
                    continue  # a sample not finished yet
                status = "error" if rng.random() < 0.1 else "ok"
                w.attempt("pass", 2, task, 1, sample, status,
                          None if status == "error" else rng.random() < p)
        w.write()
        store.rebuild_kept_chains(con)  # rows written by SQL, not through store.append_attempts
