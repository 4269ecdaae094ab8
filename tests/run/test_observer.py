"""One observer hears a run: `prepared` first, an `attempt` per attempt in the order the run
made them, `finished` last with the result; an observer that raises never stops a paid-for run;
`seqk rejudge` is heard the same way, since it runs through the same path."""

from __future__ import annotations

import logging

from helpers import rows, write_variant
from scripts import solves_on

from seqk import api, models
from seqk.config import runspec
from seqk.models.role import RoleSpec
from seqk.run import engine
from seqk.run import rejudge as rejudging
from seqk.run.observer import AttemptEvent, RunObserver, RunResult
from seqk.run.prepare import Prepared


class Recorder(RunObserver):
    """Writes down every event, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, object]] = []

    def prepared(self, prepared: Prepared) -> None:
        self.events.append(("prepared", prepared))

    def attempt(self, event: AttemptEvent) -> None:
        self.events.append(("attempt", event))

    def finished(self, result: RunResult) -> None:
        self.events.append(("finished", result))


class Broken(RunObserver):
    """A display with a bug in every method."""

    def __init__(self) -> None:
        self.calls = 0

    def prepared(self, prepared: Prepared) -> None:
        self.calls += 1
        raise RuntimeError("the bar broke")

    def attempt(self, event: AttemptEvent) -> None:
        self.calls += 1
        raise KeyError("no such column")

    def finished(self, result: RunResult) -> None:
        self.calls += 1
        raise ValueError("the summary broke")


def seq_spec(tmp_path, name: str = "v.yaml"):
    return runspec.load(write_variant(tmp_path, name, benchmark="toy", metric="seq@k", k=3,
                                      model="mock/actor", options={"n": 4}))


def test_events_arrive_in_order_prepared_attempts_finished(tmp_path, db):
    models.register_mock("mock/actor", solves_on({1: 1, 2: 3}))
    seen = Recorder()
    result = engine.run(seq_spec(tmp_path), db, seen)
    kinds = [kind for kind, _ in seen.events]
    assert kinds == ["prepared"] + ["attempt"] * result.attempts_written + ["finished"]
    assert seen.events[0][1].action == "new" and seen.events[-1][1] is result
    attempts = [event for kind, event in seen.events if kind == "attempt"]
    # Within a seq@k task, attempts come in order; the task's outcome comes with its last one.
    for task_index in (1, 2, 3, 4):
        mine = [e for e in attempts if e.record.task_index == task_index]
        assert [e.record.attempt_index for e in mine] == list(range(1, len(mine) + 1))
        assert [e.task_done for e in mine] == [False] * (len(mine) - 1) + [True]
    outcomes = {e.record.task_index: e.task_outcome for e in attempts if e.task_done}
    assert outcomes == {1: "passed", 2: "passed", 3: "failed", 4: "failed"}
    assert len(attempts) == rows(db, "SELECT count(*) FROM attempts")[0][0] == 1 + 3 + 3 + 3


def test_an_observer_that_raises_does_not_stop_the_run(tmp_path, db, caplog):
    models.register_mock("mock/actor", solves_on({1: 1, 2: 3}))
    broken = Broken()
    with caplog.at_level(logging.ERROR, logger="seqk"):
        result = engine.run(seq_spec(tmp_path), db, broken)
    assert not result.interrupted and result.stopped is None
    assert result.attempts_written == 10 and (result.tasks_passed, result.tasks_failed) == (2, 2)
    assert broken.calls == 1 + 10 + 1
    failures = [r.getMessage() for r in caplog.records if "observer failed" in r.getMessage()]
    assert len(failures) == 12 and "'prepared'" in failures[0] and "'finished'" in failures[-1]


def test_an_observer_may_hear_only_some_events(tmp_path, db):
    """A subclass overrides what it needs; any object with some of the methods works too."""
    models.register_mock("mock/actor", solves_on({1: 1}))

    class OnlyDone:
        done = 0

        def attempt(self, event: AttemptEvent) -> None:
            self.done += event.task_done

    only = OnlyDone()
    outcome = api.run_variant(seq_spec(tmp_path), db, export=False, observer=only)  # type: ignore[arg-type]
    assert only.done == 4 and outcome.result.tasks_passed == 1


def test_rejudge_is_heard_like_any_run(tmp_path, db):
    models.register_mock("mock/actor", solves_on({1: 1, 2: 1}))
    models.register_mock("mock/judge1", lambda p: "YES" if p.split("'")[1] == p.split("the word ")[1][:2] else "NO")
    source = runspec.load(write_variant(tmp_path, benchmark="toyjudge", metric="pass@k", k=2,
                                        model="mock/actor", judge_model="mock/judge1", options={"n": 3}))
    engine.run(source, db)
    models.register_mock("mock/judge2", lambda p: "YES")
    spec = rejudging.rejudge_spec(source.run_id, RoleSpec(role="judge", model="mock/judge2",
                                                          temperature=0.0), db=db)
    seen = Recorder()
    result = rejudging.rejudge(spec, db, seen)
    kinds = [kind for kind, _ in seen.events]
    assert kinds == ["prepared"] + ["attempt"] * 6 + ["finished"]
    # `prepared` carries the slots the re-judging runs (the source's answers), not a new run's.
    assert seen.events[0][1].pending == {1: [1, 2], 2: [1, 2], 3: [1, 2]}
    assert result.tasks_passed == 3 and seen.events[-1][1] is result
    again = Recorder()
    assert rejudging.rejudge(spec, db, again).attempts_written == 0
    assert [kind for kind, _ in again.events] == ["prepared", "finished"]
