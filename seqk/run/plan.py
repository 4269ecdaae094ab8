"""What a run would do, before it spends anything: its id, its roles, and the
attempts and calls left, read from the database without writing to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from seqk import store
from seqk.benchmark import HistoryItem
from seqk.config.runspec import RunSpec
from seqk.config.sweep import Cell, Sweep
from seqk.errors import BadInput
from seqk.power import DEFAULT_DISCORDANCE, detectable_lift, discordance_upper_limit, tasks_needed
from seqk.run.prepare import decide_in, pending_attempts
from seqk.store import queries


@dataclass
class Plan:
    """What a run of `spec` would do (`seqk plan`), read without writing anything."""

    spec: RunSpec
    state: str
    """'new run', 'resume', 'extend k 2→4', 'restart at k=…', or 'REFUSED: …' with the reason."""
    n_tasks: int
    """Tasks the variant selects."""
    n_tasks_pending: int
    """Of those, tasks with attempts still to run."""
    attempts_min: int
    attempts_max: int
    """Attempts still to run: seq@k stops at a task's first success (min), pass@k runs all (min = max)."""
    critic_calls_max: int
    actor_cost_low: float | None
    actor_cost_high: float | None
    """The actor's rough cost range (prompt chars/4; judge and critic not included); high None:
    unbounded (no max_tokens)."""
    price_known: bool
    tiers: list[dict[str, Any]]
    """The actor's cost if every attempt runs, per way to pay (tier, cost_usd, critical_path)."""
    power: dict[str, Any] | None
    """seq@k: McNemar's power against pass@k (n_tasks, discordance, detectable_lift, lift, ...)."""
    protocol: dict[str, Any]
    """seq@k: how the retry prompt differs from the seed's."""
    preview: dict[str, Any] | None
    """seq@k: the messages attempt 2 would see (attempt_index, task_index, messages)."""
    budget: list[Any] = field(default_factory=list)
    """The budget's lines (seqk.run.budget), when the variant sets one."""
    refusal: Exception | None = None
    """What `seqk run` would refuse before writing anything (a key, a local model, a server)."""

    @property
    def run_id(self) -> str:
        """The run the variant names."""
        return self.spec.run_id

    @property
    def fingerprint(self) -> str:
        """The run's fingerprint (seqk.config.identity)."""
        return self.spec.fingerprint()

    @property
    def roles(self) -> dict[str, str | None]:
        """Each role's model (None: no LLM in that role)."""
        return {"actor": self.spec.actor.model, "judge": self.spec.judge.model, "critic": self.spec.critic.model}


def plan_run(spec: RunSpec, db: store.DbLike = None, lift: float | None = None) -> Plan:
    """Run id, roles, fingerprint, state and the range of attempts and calls still to make; for
    seq@k, the power of the comparison with pass@k (`power`), and the tasks a `lift` needs."""
    selected = [t.task_index for t in spec.tasks]
    discordance: dict[str, Any] | None = None
    state, pending = "new run", {i: [1] * spec.chains if spec.seq else list(range(1, spec.k + 1))
                                 for i in selected}
    database = store.open(db)
    if database.exists():
        with database.connect(read_only=True) as con:
            row, decision = decide_in(con, spec)
            if row is not None:
                if decision.refused_on == "settings":
                    state = "REFUSED: settings differ from the stored run: " + ", ".join(decision.changed)
                elif decision.refused_on == "k":
                    state = f"REFUSED: k={spec.k} is smaller than the stored k={row['k']}"
                elif decision.refused_on == "restart":
                    # What --restart would run is shown below the refusal.
                    state = "REFUSED: " + decision.reason
                    pending = pending_attempts(con, spec, decision.generation)
                elif decision.refused_on == "chains":
                    state = f"REFUSED: chains={spec.chains} is fewer than the stored chains={row['chains']}"
                else:
                    state = {"restart": f"restart at k={spec.k} (stored k={row['k']})",
                             "extend": f"extend k {row['k']}→{spec.k}"}.get(decision.action, "resume")
                    pending = pending_attempts(con, spec, decision.generation)
                if spec.seq:
                    discordance = next(iter(queries.pair_discordance(con, run_id=spec.run_id)), None)
    if spec.seq:  # one entry per unfinished chain
        low = sum(len(idx) for idx in pending.values())
        high = sum(spec.k - i + 1 for idx in pending.values() for i in idx)
    else:
        low = high = sum(len(idx) for idx in pending.values())
    mode = spec.mode
    low_cost, high_cost, price_known = _actor_cost_range(spec, pending)
    return Plan(
        spec, state, n_tasks=len(selected), n_tasks_pending=len(pending),
        attempts_min=low, attempts_max=high,
        critic_calls_max=high if (spec.seq and mode.llm_critic) else 0,
        actor_cost_low=low_cost, actor_cost_high=high_cost, price_known=price_known,
        tiers=_tiers(spec, pending),
        power=_power(len(selected), discordance, lift) if spec.seq else None,
        protocol=spec.protocol.identity() if spec.seq else {},
        preview=attempt_preview(spec),
    )


OUTPUT_PLACEHOLDER = "‹attempt 1's output›"
FEEDBACK_PLACEHOLDER = "‹the feedback on attempt 1›"
TASK_SHOWN_CHARS = 300
"""A task prompt longer than this is cut in the preview (its framing and history are shown whole)."""


def attempt_preview(spec: RunSpec) -> dict[str, Any] | None:
    """seq@k: the messages attempt 2 would be sent on the first selected task (attempt 1 when k is
    1), with placeholders for attempt 1's output and its feedback and a long task prompt cut."""
    if not spec.seq or not spec.tasks:
        return None
    from seqk.models.base import messages_of

    task = spec.tasks[0]
    text = task.prompt if len(task.prompt) <= TASK_SHOWN_CHARS else (
        f"{task.prompt[:TASK_SHOWN_CHARS - 100]} … (task {task.task_index}'s prompt: {len(task.prompt)} characters)")
    attempt_index = min(2, spec.k)
    history = [HistoryItem(1, OUTPUT_PLACEHOLDER, FEEDBACK_PLACEHOLDER)][:attempt_index - 1]
    prompt = spec.protocol.render(text, attempt_index, spec.k, seq=True, history=history).prompt
    return {"attempt_index": attempt_index, "task_index": task.task_index, "messages": messages_of(prompt)}


@dataclass
class SweepPlan:
    """Each cell of a sweep with its plan (`seqk plan SWEEP`)."""

    sweep: Sweep
    cells: list[tuple[Cell, Plan]]


def plan_cells(sweep: Sweep, db: store.DbLike = None) -> SweepPlan:
    """Each cell of a sweep with its plan (what `plan_run` says of it), before anything is spent."""
    return SweepPlan(sweep, [(cell, plan_run(cell.spec, cell.settings.database(db))) for cell in sweep.cells])


def _power(n_tasks: int, measured: dict[str, Any] | None, lift: float | None) -> dict[str, Any]:
    """The exact power of the paired test seqk runs (seqk.power; α = 0.05 two-sided, 80% power) of
    seq@K against pass@K on n_tasks, with the discordance of the stored pair at its upper 95%
    limit when it has discordant tasks, else 0.3."""
    source = f"assumed (no pair of runs has measured it; {DEFAULT_DISCORDANCE} is seqk's default)"
    psi = DEFAULT_DISCORDANCE
    if measured and measured["n_shared"] and measured["discordance"]:
        n, measured_psi = measured["n_shared"], measured["discordance"]
        psi = discordance_upper_limit(measured_psi * n, n)
        source = (f"measured {measured_psi:.3f} on {n} tasks against {measured['pass_run_id']} "
                  f"({measured['n_seq_only']} solved by seq@K only, {measured['n_pass_only']} by "
                  "pass@K only), planned at its upper 95% limit")
    if lift is not None and not 0 < lift <= psi:
        raise BadInput(f"--lift {lift}: expected a lift between 0 and the discordance {psi:.3f} "
                       "(a run cannot gain more tasks than the two runs disagree on)")
    return {"n_tasks": n_tasks, "discordance": psi, "discordance_source": source, "alpha": 0.05,
            "power": 0.8, "detectable_lift": detectable_lift(n_tasks, psi),
            "lift": lift, "tasks_needed": tasks_needed(lift, psi) if lift is not None else None}


_CHARS_PER_TOKEN = 4  # a rough rule for English and code; the plan says it is an estimate


def _actor_cost_range(spec: RunSpec, pending: dict[int, list[int]]) -> tuple[float | None, float | None, bool]:
    """A rough range for the actor's cost of the attempts left.

    Low: every task stops at its first pending attempt, with no output tokens.
    High: every attempt runs and writes max_tokens, and each seq@k prompt carries
    every earlier output at max_tokens (None when max_tokens is unset).
    Judge and critic calls are not included.
    """
    from seqk.models import price_of

    price = price_of(spec.actor.model or "", spec.actor.price, spec.actor.api_base)
    if price is None:
        return None, None, False
    if price.input == price.output == 0:
        return 0.0, 0.0, True
    by_index = {t.task_index: t for t in spec.tasks}
    out_max = spec.actor.max_tokens
    low_tokens = high_in = high_out = 0.0
    for task_index, indices in pending.items():
        base = len(by_index[task_index].prompt) / _CHARS_PER_TOKEN
        low_tokens += base
        attempts = [a for i in indices for a in range(i, spec.k + 1)] if spec.seq else indices
        for attempt_index in attempts:
            history = (attempt_index - 1) * (out_max or 0) if spec.seq and spec.protocol.shows_history else 0
            high_in += base + history
            high_out += out_max or 0
    low = low_tokens * price.input / 1e6
    high = (high_in * price.input + high_out * price.output) / 1e6 if out_max else None
    return low, high, True


TURNAROUND = "≤ 24 h each, typically minutes to hours"
"""What the plan assumes of one batch's turnaround (the providers' completion window)."""


def _tiers(spec: RunSpec, pending: dict[int, list[int]]) -> list[dict[str, Any]]:
    """The actor's cost of the attempts left if every one runs (the high end), synchronous,
    through the batch API and with prompt caching, and each one's critical path.

    Caching: the stable prefix (the task for seq@k, the whole prompt for pass@k's k samples) is
    written once per task at 1.25x input (Anthropic; 1x elsewhere) and read at `cached_input` by
    every later attempt. Output is max_tokens per attempt (0 when unset: input only)."""
    from seqk.models import price_of
    from seqk.models.pricing import is_anthropic

    model = spec.actor.model or ""
    price = price_of(model, spec.actor.price, spec.actor.api_base)
    if price is None:
        return []
    by_index = {t.task_index: t for t in spec.tasks}
    out_max = spec.actor.max_tokens or 0
    fresh = reused = written = outputs = 0.0
    for task_index, indices in pending.items():
        base = len(by_index[task_index].prompt) / _CHARS_PER_TOKEN
        attempts = list(range(indices[0], spec.k + 1)) if spec.seq else indices
        for n, attempt_index in enumerate(attempts):
            history = (attempt_index - 1) * out_max if spec.seq and spec.protocol.shows_history else 0
            fresh += history
            written += base if n == 0 else 0
            reused += base if n > 0 else 0
            outputs += out_max

    def cost(tier: str, cached: bool) -> float:
        p = price.at(tier)
        write = p.cache_write if p.cache_write is not None else p.input * (1.25 if is_anthropic(model) else 1.0)
        if not cached:
            return ((fresh + written + reused) * p.input + outputs * p.output) / 1e6
        return (fresh * p.input + written * write + reused * p.cached_input + outputs * p.output) / 1e6

    rounds = spec.k if spec.seq else 1
    critic_rounds = spec.k - 1 if spec.seq and spec.mode.llm_critic and spec.critic.batch else 0
    calls_in_a_row = f"{spec.k} calls in a row per task" if spec.seq else "one call per attempt, all at once"
    return [
        {"tier": "synchronous", "cost_usd": cost("sync", False), "critical_path": calls_in_a_row},
        {"tier": "batch", "cost_usd": cost("batch", False),
         "critical_path": f"{rounds + critic_rounds} batch round(s) × turnaround ({TURNAROUND})"},
        {"tier": "synchronous + caching", "cost_usd": cost("sync", True), "critical_path": calls_in_a_row},
        {"tier": "batch + caching", "cost_usd": cost("batch", True),
         "critical_path": f"{rounds + critic_rounds} batch round(s) × turnaround"},
    ]
