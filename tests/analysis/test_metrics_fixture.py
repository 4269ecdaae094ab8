"""A small database written row by row, whose figures are worked out by hand in
test_metrics.py, and the check that current_attempts_of keeps the attempt that counts.

Benchmark slice toy-plain, K = 3, actor mock/a, tasks 1-5 shared by every run (task 6
only in the pass@k runs). Outcomes: S = success, F(x) = failure with score x, E = error.

seq@k run SEQ (feedback binary; a critic call after every failed attempt):
    task 1: S
    task 2: F(.2) S
    task 3: F(.5) F(.1) F(.3)
    task 4: F(.4) E                  stopped on an error
    task 5: [E, superseded] F(.6) F(.7) S
pass@k run PASS (feedback binary), samples 1..3:
    task 1: S F S     task 2: F F F     task 3: F S F
    task 4: S E F     task 5: F F F     task 6: S S S
pass@k run PASS_HINT (feedback hint): only task 1, S S S; a second candidate partner.
pass@k run PASS_K4 (k = 4, no attempts): not a candidate (k differs).

Costs: an actor call costs $0.001 × attempt index in SEQ and $0.002 in PASS, a critic
call $0.0005; an errored attempt's actor call failed (no tokens, no cost).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

from seqk import store
from seqk.store import writes

SEQ = "toy-plain/seqk/mock__a/deterministic/binary"
PASS = "toy-plain/passk/mock__a/deterministic/binary"
PASS_HINT = "toy-plain/passk/mock__a/deterministic/hint"
PASS_K4 = "toy-plain/passk/mock__a/deterministic/binary-k4"

SEQ_ATTEMPTS: dict[int, list[str]] = {
    1: ["S"], 2: ["F.2", "S"], 3: ["F.5", "F.1", "F.3"], 4: ["F.4", "E"],
    5: ["E", "F.6", "F.7", "S"],  # the leading E is a superseded error of slot 1
}
PASS_ATTEMPTS: dict[int, list[str]] = {
    1: ["S", "F0", "S"], 2: ["F0", "F0", "F0"], 3: ["F0", "S", "F0"], 4: ["S", "E", "F0"],
    5: ["F0", "F0", "F0"], 6: ["S", "S", "S"],
}
_T0 = datetime(2026, 1, 1)


def _run(con, run_id: str, metric: str, k: int, feedback_mode: str) -> None:
    con.execute(
        "INSERT INTO run_rows VALUES (?, 'toy', 'toy-plain', ?, ?, 1, ?, 'mock/a', NULL, NULL, "
        "'deterministic', 0.7, '{}', '{}', 'fp', '{}', ?, ?, 'test', false, false, 1)",
        [run_id, metric, k, feedback_mode, _T0, _T0])


def _tasks(con, run_id: str, indices: list[int]) -> None:
    for i in indices:
        con.execute("INSERT INTO tasks VALUES (?, ?, ?, ?, ?, '{}')",
                    [run_id, i, f"t{i}", f"Say the word w{i}.", f"hash{i}"])


def _attempt(con, run_id: str, task: int, slot: int, code: str, clock: list[int],
             actor_cost: float, critic: bool) -> None:
    clock[0] += 1
    uid = f"{run_id}#{task}#{slot}#{clock[0]}"
    at = _T0 + timedelta(seconds=clock[0])
    if code == "E":
        status, success, score, error = "error", None, None, json.dumps({"stage": "actor"})
    else:
        status, success, error = "ok", code == "S", None
        score = 1.0 if code == "S" else float(code[1:] or 0)
    con.execute("INSERT INTO attempts VALUES (?, ?, 1, ?, ?, 3, ?, ?, ?, 'p', 'o', NULL, NULL, "
                "NULL, ?, ?, ?, 1)", [uid, run_id, task, slot, status, success, score, error, at, at])
    calls = [("actor", "mock/a", None if code == "E" else 10 * slot, None if code == "E" else 5,
              None if code == "E" else actor_cost, "boom" if code == "E" else None)]
    if critic and code.startswith("F"):
        calls.append(("critic", "mock/critic", 20, 3, 0.0005, None))
    for index, (role, model, tokens_in, tokens_out, cost, err) in enumerate(calls, start=1):
        con.execute("INSERT INTO calls VALUES (?, ?, 1, ?, ?, ?, ?, ?, NULL, NULL, ?, 0, 0, ?, ?, "
                    "0.0, 0, ?, ?, NULL, 'sync', 1)",
                    [uid, run_id, task, slot, index, role, model, tokens_in, tokens_out, cost,
                     err, at])
    # the chain's outcome kept, as store.append_attempts keeps it
    writes.keep_chains(con, [(run_id, 1, task, 1)])


def build(path: Path) -> Path:
    """Write the fixture database at `path` and return the path."""
    with store.connect(path) as con:
        clock = [0]
        _run(con, SEQ, "seq@k", 3, "binary")
        _tasks(con, SEQ, [1, 2, 3, 4, 5])
        for task, codes in SEQ_ATTEMPTS.items():
            slots = list(range(1, len(codes) + 1)) if task != 5 else [1, 1, 2, 3]
            for slot, code in zip(slots, codes, strict=True):
                _attempt(con, SEQ, task, slot, code, clock, 0.001 * slot, critic=True)
        _run(con, PASS, "pass@k", 3, "binary")
        _tasks(con, PASS, [1, 2, 3, 4, 5, 6])
        for task, codes in PASS_ATTEMPTS.items():
            for slot, code in enumerate(codes, start=1):
                _attempt(con, PASS, task, slot, code, clock, 0.002, critic=False)
        _run(con, PASS_HINT, "pass@k", 3, "hint")
        _tasks(con, PASS_HINT, [1])
        for slot in (1, 2, 3):
            _attempt(con, PASS_HINT, 1, slot, "S", clock, 0.002, critic=False)
        _run(con, PASS_K4, "pass@k", 4, "binary")
    return path


def test_current_attempts_of_keeps_one_row_per_slot_of_the_chosen_runs(tmp_path):
    db = build(tmp_path / "fixture.duckdb")
    with store.connect(db, read_only=True) as con:
        _, seq = store.adhoc(con, "SELECT run_id, task_index, attempt_index, status, success, score "
                                  f"FROM current_attempts_of(run_ids := ['{SEQ}']) ORDER BY ALL")
        _, every = store.adhoc(con, "SELECT count(*) FROM current_attempts")
    assert {row[0] for row in seq} == {SEQ} and len(seq) == 11
    # Task 5's error of slot 1 is superseded by the valid row; task 4's error of slot 2 counts.
    assert (SEQ, 5, 1, "ok", False, 0.6) in seq and not any(r[1:4] == (5, 1, "error") for r in seq)
    assert (SEQ, 4, 2, "error", None, None) in seq
    assert every == [(11 + 18 + 3,)]
