"""Before a run: register it or check it against what the database holds, register
its tasks, and ask SQL (sql/attempts.sql) what is left to do.

Refused (RunConflict): a changed fingerprint, a smaller k, fewer chains, or a canonical task
index that now names different content. A larger k extends the run (`continue: true`) or
restarts it in a new generation (`continue: false`, or `seqk run --restart`); without
either, a restart that would discard paid attempts is refused, saying what they cost. More
chains extend the run like more tasks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from seqk import store
from seqk.benchmark import HistoryItem, Verdict
from seqk.config.identity import differing_fields
from seqk.config.runspec import RunSpec
from seqk.errors import RunConflict
from seqk.run import limits
from seqk.store import queries
from seqk.version import __version__


@dataclass
class MissingFeedback:
    """A valid failed seq@k attempt whose critic failed: the judge's verdict stands, and the
    critic is asked again before the next attempt (never the actor)."""

    attempt_uid: str
    attempt_index: int
    output: str
    verdict: Verdict


@dataclass
class KeptOutput:
    """An attempt whose judge failed: the actor's prompt and output are kept, and the judge is
    asked again on them (never the actor, whose re-roll until the judge parses would bias success)."""

    prompt: str
    output: str
    k: int
    """The K the kept prompt was built with."""


@dataclass
class Prepared:
    """The run as found in the database, and the work left."""

    run_id: str
    action: str
    """'new' | 'resume' | 'extend' (continue with a larger k) | 'restart' (larger k, fresh generation)."""
    generation: int
    k: int
    previous_k: int | None
    pending: dict[int, list[int]]
    """task_index -> attempt indices to run now (seq@k: just the next one of each unfinished
    chain, in the order of `pending_chains`)."""
    history: dict[tuple[int, int], list[HistoryItem]]
    """(task_index, chain_index) -> the valid attempts a resumed seq@k chain shows next."""
    n_selected: int
    missing_feedback: dict[tuple[int, int], MissingFeedback] = field(default_factory=dict)
    """(task_index, chain_index) -> its last valid attempt, failed, whose critic failed:
    feedback to write first."""
    kept_outputs: dict[tuple[int, int, int], KeptOutput] = field(default_factory=dict)
    """(task_index, chain_index, attempt_index) -> the output a failed judge left to be judged again."""
    pending_chains: dict[int, list[int]] = field(default_factory=dict)
    """task_index -> the chain of each entry of `pending[task_index]` (absent: chain 1)."""
    chains: int = 1
    previous_chains: int | None = None
    endpoint_limits: dict[tuple[str, str], limits.RememberedLimit] = field(default_factory=dict)
    """(api_base, model) -> the limit on calls in flight each endpoint last sustained
    (seqk.run.limits): where the run's pool starts."""

    def slots(self, task_index: int) -> list[tuple[int, int]]:
        """(chain_index, attempt_index) of the task's pending entries."""
        attempts = self.pending.get(task_index, [])
        chains = self.pending_chains.get(task_index, [1] * len(attempts))
        return list(zip(chains, attempts, strict=True))

    @property
    def n_pending_attempts(self) -> int:
        """Attempts scheduled now (seq@k tasks may add more as they fail)."""
        return sum(len(v) for v in self.pending.values())


@dataclass(frozen=True)
class Paid:
    """What the attempts of the stored generation cost: what a restart would discard."""

    n_attempts: int
    """Attempt rows of the generation, errors included."""
    cost_usd: float | None
    """The priced calls' cost; None when no call was priced."""
    n_unpriced_calls: int
    """Calls with tokens but no price (their cost is not in cost_usd)."""
    input_tokens: int
    """Input tokens of every call."""
    output_tokens: int
    """Output tokens of every call."""

    def describe(self) -> str:
        """'12 attempts ($0.0432)', or with tokens when some calls have no price."""
        tokens = f"{self.input_tokens:,} tokens in / {self.output_tokens:,} out"
        if self.cost_usd is None:
            return f"{self.n_attempts} attempts ({tokens}; no price known)"
        if self.n_unpriced_calls:
            return (f"{self.n_attempts} attempts (${self.cost_usd:.4f} for priced calls, plus "
                    f"{self.n_unpriced_calls} unpriced calls; {tokens})")
        return f"{self.n_attempts} attempts (${self.cost_usd:.4f})"


@dataclass(frozen=True)
class Decision:
    """What to do with a variant given the run the database holds for its run_id."""

    action: str
    """'new' | 'resume' | 'extend' (continue with a larger k) | 'restart' (larger k, fresh
    generation) | 'refuse' (a changed fingerprint or a smaller k)."""
    generation: int
    """The generation the run's attempts go to (for 'refuse', the stored one)."""
    previous_k: int | None
    """The stored k (None for a new run)."""
    refused_on: str | None = None
    """For 'refuse': 'settings' (the fingerprint differs), 'k' (a smaller k), 'chains' (fewer
    chains) or 'restart' (a larger k would discard paid attempts, and neither `continue:` nor
    --restart says so)."""
    changed: tuple[str, ...] = ()
    """The settings that differ from the stored run (when refused on them)."""
    reason: str = ""
    """For 'refuse': why, in a sentence that says what to do instead."""


def decide(row: dict[str, Any] | None, spec: RunSpec, paid: Paid | None = None) -> Decision:
    """Resume, extend, restart or refuse: the one rule for `seqk run` and `seqk plan`.

    `row` is the run's stored row (sql/runs.sql `get_run`), None when the database has no such run;
    `paid`, what its stored generation cost (`decide_in` reads both).
    """
    if row is None:
        return Decision("new", 1, None)
    old_k, generation = row["k"], row["generation"]
    if row["fingerprint"] != spec.fingerprint():
        changed = tuple(differing_fields(json.loads(row["fingerprint_fields"]), spec.fingerprint_fields()))
        return Decision("refuse", generation, old_k, "settings", changed, (
            f"run {spec.run_id} was made with different settings ({', '.join(changed)}); resuming would "
            f"mix results. Restore those settings, or give this variant a `tag:` (for example "
            f"tag: t0.2) to make it a run of its own, or use another database (--db)."
            + (_OLD_SEEDS if "seed_scheme" in changed else "")))
    old_chains = row.get("chains", 1)
    if spec.chains < old_chains:
        return Decision("refuse", generation, old_k, "chains", reason=(
            f"run {spec.run_id} has chains={old_chains}; chains={spec.chains} is fewer. Its chains "
            f"are already in the database and the frontier counts them all; keep chains: "
            f"{old_chains} (or more), or use another database."))
    if spec.k < old_k:
        return Decision("refuse", generation, old_k, "k", reason=(
            f"run {spec.run_id} has k={old_k}; k={spec.k} is smaller. Metrics at t <= {old_k} are "
            f"already in the database (`seqk report`); to start over, use another database."))
    if spec.k > old_k:
        if spec.continue_:
            return Decision("extend", generation, old_k)
        if spec.continue_ is None and paid is not None and paid.n_attempts:
            return Decision("refuse", generation + 1, old_k, "restart", reason=(
                f"run {spec.run_id} has k={old_k}; k={spec.k} without `continue:` restarts it in a "
                f"new generation and discards its {paid.describe()} (they stay in the database but no "
                f"longer count). To keep them and go on, write `continue: true` in the variant; to "
                f"restart and pay again, run `seqk run --restart` (or write `continue: false`)."))
        return Decision("restart", generation + 1, old_k)
    return Decision("resume", generation, old_k)


_OLD_SEEDS = (" seed_scheme: this run was seeded by the old rule (every task sampled with seed + "
              "attempt_index - 1); seqk now derives each call's seed from (seed, task, sample, "
              "attempt), so new attempts would not be comparable with the old ones.")

def decide_in(con: Any, spec: RunSpec) -> tuple[dict[str, Any] | None, Decision]:
    """The stored run row and the decision, reading what a restart would discard when it matters."""
    row = store.get_run(con, spec.run_id)
    paid = None
    if row is not None and spec.k > row["k"] and spec.continue_ is None:
        (found,) = queries.generation_paid(con, run_id=spec.run_id, generation=row["generation"])
        paid = Paid(**found)
    return row, decide(row, spec, paid)


def prepare(spec: RunSpec, db: store.DbLike) -> Prepared:
    """Register or check the run, register its tasks, and ask SQL what is left.

    Refuses (RunConflict) a changed fingerprint, a smaller k, or a task whose
    canonical index now names different content.
    """
    selected = [t.task_index for t in spec.tasks]
    with store.open(db).connect(checkpoint=False) as con, store.transaction(con):
        row, decision = decide_in(con, spec)
        config = json.dumps(spec.config_json())
        if decision.action == "refuse":
            raise RunConflict(decision.reason)
        if decision.action == "new":
            store.insert_run(con, {
                "run_id": spec.run_id, "benchmark": spec.benchmark.name,
                "slice": spec.slice_name, "metric": spec.metric, "k": spec.k, "chains": spec.chains,
                "feedback_mode": spec.feedback_mode, "actor_model": spec.actor.model,
                "judge_model": spec.judge.model, "critic_model": spec.critic.model,
                "verifier": spec.benchmark.verifier_of(spec.options), "temperature": spec.actor.temperature,
                "options": json.dumps(spec.options.model_dump(mode="json")),
                "config": config, "fingerprint": spec.fingerprint(),
                "fingerprint_fields": json.dumps(spec.fingerprint_fields()), "seqk_version": __version__,
                "shows_grading_info": spec.mode.shows_grading_info,
                "soft_score_clipped": spec.benchmark.soft_score_clipped})
        elif decision.action == "extend":
            store.extend_run(con, spec.run_id, spec.k, config)
        elif decision.action == "restart":
            store.restart_run(con, spec.run_id, spec.k, decision.generation, config)
        previous_chains = row["chains"] if row is not None else None
        if previous_chains is not None and spec.chains > previous_chains:
            queries.add_run_chains(con, chains=spec.chains, config=config, run_id=spec.run_id)
        generation = decision.generation
        _check_tasks(con, spec)
        pending, pending_chains = pending_slots(con, spec, generation)
        history: dict[tuple[int, int], list[HistoryItem]] = {}
        last: dict[tuple[int, int], dict[str, Any]] = {}
        missing_feedback: dict[tuple[int, int], MissingFeedback] = {}
        resumed = [t for t, idx in pending.items() if spec.seq and max(idx) > 1]
        if resumed:
            for h in queries.seq_history(con, run_id=spec.run_id, generation=generation,
                                         task_indices=store.int_list(resumed)):
                slot = (h["task_index"], h["chain_index"])
                history.setdefault(slot, []).append(
                    HistoryItem(h["attempt_index"], h["output"] or "", h["feedback"]))
                last[slot] = h
            for slot, h in last.items():
                # feedback_mode none writes no feedback: none is missing
                if h["feedback"] is None and not h["success"] and spec.mode.shows_history:
                    details = h["judge_details"]
                    missing_feedback[slot] = MissingFeedback(
                        h["attempt_uid"], h["attempt_index"], h["output"] or "",
                        Verdict(False, h["score"] or 0.0, h["raw_eval_output"] or "",
                                json.loads(details) if isinstance(details, str) else details or {}))
        kept_outputs = {
            (t, c, a): KeptOutput(prompt, output, k) for t, c, a, prompt, output, k in queries.kept_outputs(
                con, run_id=spec.run_id, generation=generation, task_indices=store.int_list(pending))}
        known = limits.remembered(con)
    return Prepared(spec.run_id, decision.action, generation, spec.k, decision.previous_k, pending, history,
                    len(selected), missing_feedback, kept_outputs, pending_chains, spec.chains,
                    previous_chains, known)


def pending_attempts(con: Any, spec: RunSpec, generation: int) -> dict[int, list[int]]:
    """task_index -> attempt indices to run now in this generation (seq@k: the next one of each
    unfinished chain)."""
    return pending_slots(con, spec, generation)[0]


def pending_slots(con: Any, spec: RunSpec, generation: int) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
    """(task_index -> attempt indices to run now, task_index -> the chain of each), the second
    holding only tasks with a chain other than 1 pending."""
    pending: dict[int, list[int]] = {}
    chains: dict[int, list[int]] = {}
    slots = queries.pending_attempts(
        con, run_id=spec.run_id, generation=generation, k=spec.k, is_seq=spec.seq,
        chains=spec.chains, task_indices=store.int_list(t.task_index for t in spec.tasks))
    other_chains = False
    for task_index, chain_index, attempt_index in slots:
        pending.setdefault(task_index, []).append(attempt_index)
        other_chains = other_chains or chain_index != 1
    if other_chains:  # else every entry is chain 1's (a run's 100,000 tasks need no list of it)
        for task_index, chain_index, _ in slots:
            chains.setdefault(task_index, []).append(chain_index)
    return pending, {t: c for t, c in chains.items() if c != [1] * len(c)}


def _check_tasks(con: Any, spec: RunSpec) -> None:
    known = store.task_identities(con, spec.run_id)
    clashes, new = [], []
    for task in spec.tasks:
        if task.task_index not in known:
            new.append(task)
        elif known[task.task_index] != (task.task_id, task.content_hash):
            old_id = known[task.task_index][0]
            what = "content changed" if old_id == task.task_id else f"was {old_id!r}"
            clashes.append(f"task {task.task_index} ({task.task_id!r}): {what}")
    if clashes:
        shown = "; ".join(clashes[:5]) + (f"; and {len(clashes) - 5} more" if len(clashes) > 5 else "")
        raise RunConflict(
            f"run {spec.run_id}: the data set changed under the same canonical indices: {shown}. "
            f"Resuming would mix tasks; use another database (--db).")
    store.insert_tasks(con, spec.run_id, [
        {"task_index": t.task_index, "task_id": t.task_id, "prompt": t.prompt,
         "content_hash": t.content_hash, "meta": t.meta} for t in new])
