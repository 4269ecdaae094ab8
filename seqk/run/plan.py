"""What a run would do, before it spends anything: its id, its roles, and the
attempts and calls left, read from the database without writing to it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from seqk import store
from seqk.config.spec import RunSpec
from seqk.errors import BadInput
from seqk.run.prepare import decide, pending_attempts
from seqk.stats import DEFAULT_DISCORDANCE, mcnemar_detectable_lift, mcnemar_tasks_needed
from seqk.store import queries


def plan(spec: RunSpec, db: str | Path | None = None, lift: float | None = None) -> dict[str, Any]:
    """Run id, roles, fingerprint, state and the range of attempts and calls still to make; for
    seq@k, the power of the comparison with pass@k (`power`), and the tasks a `lift` needs."""
    selected = [t.task_index for t in spec.tasks]
    discordance: dict[str, Any] | None = None
    state, pending = "new run", {i: [1] * spec.chains if spec.seq else list(range(1, spec.k + 1))
                                 for i in selected}
    path = store.default_db_path(db if db is not None else spec.db)
    if path.exists():
        with store.connect(path, read_only=True) as con:
            row = store.get_run(con, spec.run_id)
            if row is not None:
                decision = decide(row, spec)
                if decision.refused_on == "settings":
                    state = "REFUSED: settings differ from the stored run: " + ", ".join(decision.changed)
                elif decision.refused_on == "k":
                    state = f"REFUSED: k={spec.k} is smaller than the stored k={row['k']}"
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
    return {
        "run_id": spec.run_id, "state": state, "fingerprint": spec.fingerprint(),
        "roles": {"actor": spec.actor.model, "judge": spec.judge.model, "critic": spec.critic.model},
        "n_tasks": len(selected), "n_tasks_pending": len(pending),
        "attempts_min": low, "attempts_max": high,
        "critic_calls_max": high if (spec.seq and mode.llm_critic) else 0,
        "actor_cost_low": low_cost, "actor_cost_high": high_cost, "price_known": price_known,
        "power": _power(len(selected), discordance, lift) if spec.seq else None,
    }


def _power(n_tasks: int, measured: dict[str, Any] | None, lift: float | None) -> dict[str, Any]:
    """McNemar's test of seq@K against pass@K on n_tasks (Connor 1987; α = 0.05 two-sided, 80%
    power), with the discordance of the stored pair when it has discordant tasks, else 0.3."""
    source = f"assumed (no pair of runs has measured it; {DEFAULT_DISCORDANCE} is seqk's default)"
    psi = DEFAULT_DISCORDANCE
    if measured and measured["n_shared"] and measured["n_seq_only"] + measured["n_pass_only"]:
        psi = (measured["n_seq_only"] + measured["n_pass_only"]) / measured["n_shared"]
        source = (f"measured: {measured['n_seq_only'] + measured['n_pass_only']} of "
                  f"{measured['n_shared']} tasks solved by one run only, against {measured['pass_run_id']}")
    if lift is not None and not 0 < lift < psi:
        raise BadInput(f"--lift {lift}: expected a lift between 0 and the discordance {psi:.3f} "
                       "(a run cannot gain more tasks than the two runs disagree on)")
    return {"n_tasks": n_tasks, "discordance": psi, "discordance_source": source, "alpha": 0.05,
            "power": 0.8, "detectable_lift": mcnemar_detectable_lift(n_tasks, psi),
            "lift": lift, "tasks_needed": mcnemar_tasks_needed(lift, psi) if lift is not None else None}


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
            history = (attempt_index - 1) * (out_max or 0) if spec.seq else 0
            high_in += base + history
            high_out += out_max or 0
    low = low_tokens * price.input / 1e6
    high = (high_in * price.input + high_out * price.output) / 1e6 if out_max else None
    return low, high, True
