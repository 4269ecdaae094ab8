"""Re-judging stored answers: grade the actor outputs of a pass@k run again with another judge
(or the verifier's current version) without paying for the actor again.

A re-judging run is a run of its own, with the source run's slice, metric, actor, k and
feedback mode, and a verifier slot that names the new judge, the word `rejudge` and the
source's verifier slot:

    <slice>/passk/<actor>/<new judge>.rejudge.<source verifier>/<feedback>

Its attempt rows copy the source attempt's prompt and output (so every view, report and
export works on it unchanged) and `rejudged_slots` links each slot to the source attempt it
graded. Its calls are the judge's alone: the actor's calls, tokens and cost stay with the
source run and are never copied, so summing spend over runs counts each dollar once. It is
resumable like any run (the same command goes on where it stopped).

seq@k runs are refused: a different verdict moves the stopping point, and later attempts saw
feedback built on the old verdict. Their first attempts may be re-judged
(`first_attempt_only`), as a pass@1-style comparison (the new run has k = 1).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

from seqk import benchmark as benchmarks
from seqk import store
from seqk.benchmark import AgenticBenchmark, AttemptContext, HistoryItem, Task, Verdict
from seqk.config.identity import path_safe
from seqk.config.spec import RunSpec
from seqk.errors import ConfigError, ConfigIssue, NotFound, RejudgeRefused, RunConflict
from seqk.models.retry import RetryPolicy
from seqk.models.role import RoleSpec
from seqk.records import AttemptRecord, CallRecord
from seqk.run import scheduler
from seqk.run.budget import Gate
from seqk.run.metering import MeteredClient, error_record, now
from seqk.run.observer import RunObserver, RunResult
from seqk.run.prepare import Prepared
from seqk.run.scheduler import Engine
from seqk.store import queries

_ACTOR_FIELDS = ("temperature", "max_tokens", "top_p", "seed", "extra")


def rejudge_spec(source_run_id: str, judge: RoleSpec, *, first_attempt_only: bool = False,
                 concurrency: int = 16, retry: RetryPolicy | None = None,
                 db: store.DbLike = None) -> RunSpec:
    """The re-judging run of `source_run_id` with `judge` (a judge RoleSpec; model None for a
    non-LLM verifier, whose current version then grades again). Refused (RejudgeRefused) for
    seq@k without first_attempt_only, an agentic benchmark, or a run that is itself a re-judging."""
    database = store.open(db)
    with database.connect(read_only=True) as con:
        row = store.get_run(con, source_run_id)
        if row is None:
            raise NotFound(f"no run {source_run_id!r} in {database}; `seqk status` lists them")
        stored_tasks = queries.get_task_identities(con, run_id=source_run_id)
    config = json.loads(row["config"] or "{}")
    if config.get("rejudge_of"):
        raise RejudgeRefused(f"{source_run_id} is itself a re-judging of {config['rejudge_of']}: "
                             "re-judge that run instead")
    if row["metric"] == "seq@k" and not first_attempt_only:
        raise RejudgeRefused(
            f"{source_run_id} is a seq@k run: another judge's verdicts would move where each task "
            "stopped, and later attempts saw feedback built on the old verdicts. Re-judge its first "
            "attempts only (--first-attempt-only), as a pass@1-style comparison")
    bench = benchmarks.get(row["benchmark"])
    if isinstance(bench, AgenticBenchmark):
        raise RejudgeRefused(f"{bench.name} runs the actor and the judge together (an agentic "
                             "benchmark): its answers cannot be graded apart")
    if bench.verifier == "llm" and judge.model is None:
        raise ConfigError("seqk rejudge", [ConfigIssue(
            "C03", "--judge-model", f"{bench.name} is judged by an LLM: name the new judge")])
    if bench.verifier != "llm" and judge.model is not None:
        raise ConfigError("seqk rejudge", [ConfigIssue("C03", "--judge-model", (
            f"{bench.name}'s verifier is {bench.verifier}, not an LLM: re-judge without "
            "--judge-model to grade with the verifier's current version"))])
    options = bench.Options.model_validate(json.loads(row["options"] or "{}"))
    tasks = _same_tasks(bench.load_tasks(options), stored_tasks, source_run_id)
    actor_config = config.get("actor") or {}
    sampling: dict[str, Any] = {name: actor_config.get(name) for name in _ACTOR_FIELDS if name != "extra"}
    actor = RoleSpec(role="actor", model=row["actor_model"], **sampling,
                     extra=actor_config.get("extra") or {})
    parts = source_run_id.split("/")
    slot = (path_safe(judge.model) if judge.model else bench.verifier) + \
        (".rejudge1." if first_attempt_only else ".rejudge.") + parts[3]
    return RunSpec(
        run_id="/".join([*parts[:3], slot, *parts[4:]]), benchmark=bench, slice_name=row["slice"],
        metric=row["metric"], k=1 if first_attempt_only else row["k"],
        mode=bench.feedback_mode(row["feedback_mode"]), actor=actor, judge=judge,
        critic=RoleSpec(role="critic", model=None), options=options, tasks=tasks,
        # A source extended to a larger k later: the re-judging run extends with it.
        continue_=True, concurrency=concurrency, retry=retry or RetryPolicy(), quota={},
        source=f"seqk rejudge {source_run_id}", rejudge_of=source_run_id)


def _same_tasks(loaded: list[Task], stored: list[tuple[int, str, str]], source_run_id: str) -> list[Task]:
    by_index = {t.task_index: t for t in loaded}
    changed = [index for index, task_id, content_hash in stored
               if index not in by_index or (by_index[index].task_id, by_index[index].content_hash)
               != (task_id, content_hash)]
    if changed:
        raise RunConflict(f"{source_run_id}: the benchmark's tasks {changed[:5]} changed since the run "
                          "(their grading data would not be the data its answers were written for)")
    return [by_index[index] for index, _, _ in stored]


class RejudgeEngine(Engine):
    """The engine with the actor replaced by the stored answers: each attempt is one verdict.

    Its slots come from the source run: each (task, attempt) the source answered and this run
    has not judged yet, linked in `rejudged_slots` first (made inside the run's lease)."""

    def __init__(self, spec: RunSpec, prepared: Prepared, db: store.Database,
                 observer: RunObserver | None = None, budget: Gate | None = None):
        assert spec.rejudge_of is not None
        with db.connect(checkpoint=False) as con:
            store.link_rejudged_slots(con, spec.run_id, spec.rejudge_of, spec.k)
            rows = queries.rejudge_pending(con, run_id=spec.run_id, generation=prepared.generation)
        pending: dict[int, list[int]] = {}
        for r in rows:
            pending.setdefault(r["task_index"], []).append(r["attempt_index"])
        prepared.pending, prepared.history, prepared.missing_feedback = pending, {}, {}
        super().__init__(spec, prepared, db, observer, budget)
        self.sources: dict[tuple[int, int], dict[str, Any]] = {
            (r["task_index"], r["attempt_index"]): r for r in rows}

    async def attempt(self, task: Task, attempt_index: int, history: list[HistoryItem],
                      chain_index: int = 1) -> AttemptRecord:
        """Judge the stored answer of this slot; no actor, no critic."""
        source = self.sources[(task.task_index, attempt_index)]
        calls: list[CallRecord] = []
        judge = MeteredClient(self.pool, self.spec.judge, calls)
        started = now()
        verdict: Verdict | None = None
        error = None
        try:
            ctx = AttemptContext(options=self.spec.options, judge=judge,
                                 critic=MeteredClient(self.pool, self.spec.critic, calls), mode=self.mode,
                                 attempt_index=attempt_index, k=self.spec.k, seq=self.spec.seq,
                                 run_id=self.spec.run_id)
            verdict = await self.spec.benchmark.verify(task, source["output"], ctx)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - recorded, as in Engine.attempt
            error = error_record("judge", exc)
            if getattr(exc, "fatal", False) and self.result.stopped is None:
                self.result.stopped, self.result.stopped_by = str(exc), "error"
        return AttemptRecord(
            attempt_uid=str(uuid.uuid4()), run_id=self.spec.run_id, generation=self.prepared.generation,
            task_index=task.task_index, attempt_index=attempt_index, k=self.spec.k,
            status="ok" if verdict is not None else "error",
            success=verdict.success if verdict else None, score=verdict.score if verdict else None,
            prompt=source["prompt"], output=source["output"],
            raw_eval_output=verdict.raw_eval_output if verdict else None,
            judge_details=verdict.details if verdict else None, feedback=None, error=error,
            started_at=started, finished_at=now(), calls=calls)


def rejudge(spec: RunSpec, db: store.DbLike = None,
            observer: RunObserver | None = None) -> RunResult:
    """Run (or resume) a re-judging run made by `rejudge_spec`: judge calls only, through the
    same path as any run (preflight, lease, signals, observer)."""
    assert spec.rejudge_of is not None
    return scheduler.run(spec, db, observer, make_engine=RejudgeEngine)
