"""A world where feedback does nothing, written into a real seqk database through the store's own
write functions (seqk.store.writes), with its truth known.

Each replicate is one actor model with three runs on the same tasks: a seq@k run (`chains`
chains of up to K attempts, feedback mode binary), a seq@k run with feedback mode none (the same
policy without feedback), and a pass@k run of `pass_k` samples. Task i has its own chance p_i of a
right answer (heterogeneous: Beta(a, b)); every attempt and sample is an independent draw with
that chance whatever came before (feedback does nothing), and every request fails for good with
chance `error_rate`, at random (an errored seq@k attempt stops its chain, as the engine does; an
errored sample is lost). Every attempt costs the same in expectation (90-110 input tokens, 10
output, 1e-6 US$ a token), so the truth of every figure is a formula of the p_i:
seq@t = mean 1 - (1 - p_i)^t; a width x depth cell of seq@k (or of resample until success) =
mean 1 - (1 - p_i)^(w d), costing w x 110 x mean sum_{j<d} (1 - p_i)^j; pass@m costs m x 110.

    python bench/null_world.py /tmp/null.duckdb --replicates 5     # write a world, print its truth
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from seqk import store
from seqk.analysis.survival import RunChains
from seqk.records import AttemptRecord, CallRecord

T0 = datetime(2026, 1, 1)
MEAN_TOKENS = 110.0
"""Input (90..110, uniform) plus output (10) tokens of an attempt that answers."""
PRICE = 1e-6
"""US$ per token."""


@dataclass(frozen=True)
class World:
    """The null world's sizes and rates."""

    n_tasks: int = 150
    chains: int = 4
    k: int = 3
    pass_k: int = 12
    error_rate: float = 0.1
    a: float = 0.6
    b: float = 1.2
    """p_i ~ Beta(a, b): mean a / (a + b)."""
    boost: float = 0.0
    """0: the null world. Above 0, feedback helps: each attempt of the seq@k run (feedback binary)
    after its first is right with chance 1 - (1 - p_i)(1 - boost); the run without feedback and
    the pass@k samples keep p_i (bench/bench_band.py: coverage where the runs truly differ)."""


def run_ids(replicate: int) -> dict[str, str]:
    """The replicate's three run ids: seq, none (seq@k without feedback), pass."""
    model = f"null__m{replicate:04d}"
    return {"seq": f"toy-plain/seqk/{model}/deterministic/binary",
            "none": f"toy-plain/seqk/{model}/deterministic/none",
            "pass": f"toy-plain/passk/{model}/deterministic/binary"}


def _run_row(run_id: str, metric: str, k: int, chains: int, mode: str, model: str) -> dict:
    return {"run_id": run_id, "benchmark": "toy", "slice": "toy-plain", "metric": metric, "k": k,
            "chains": chains, "feedback_mode": mode, "actor_model": model, "judge_model": None,
            "critic_model": None, "verifier": "deterministic", "temperature": 0.7, "options": "{}",
            "config": json.dumps({"source": "bench/null_world.py"}), "fingerprint": run_id,
            "fingerprint_fields": "{}", "seqk_version": "null-world", "shows_grading_info": False,
            "soft_score_clipped": False}


def _attempt(run_id: str, task: int, chain: int, index: int, k: int, outcome: str,
             tokens: int, clock: list[int]) -> AttemptRecord:
    clock[0] += 1
    at = T0 + timedelta(seconds=clock[0])
    error = outcome == "error"
    call = CallRecord(role="actor", model="null/model", prompt=None, output=None,
                      input_tokens=None if error else tokens - 10, cached_tokens=0, thinking_tokens=0,
                      output_tokens=None if error else 10, cost_usd=None if error else tokens * PRICE,
                      latency_s=0.0, retries=0, error="503 overloaded, for good" if error else None,
                      started_at=at)
    return AttemptRecord(
        f"{run_id}#{task}#{chain}#{index}", run_id, 1, task, index, k, "error" if error else "ok",
        None if error else outcome == "right", None if error else float(outcome == "right"), None,
        None, None, None, None, {"stage": "actor", "type": "PermanentProviderError"} if error else None,
        at, at, [call], chain)


@dataclass(frozen=True)
class Draw:
    """One replicate's outcomes: p (per task), and per run an outcome code per slot (0 wrong,
    1 right, 2 error; -1 never run: a seq@k chain stops at its first right answer or error) and
    the tokens each slot spent."""

    p: np.ndarray
    outcomes: dict[str, np.ndarray]
    """'seq', 'none': shape (tasks, chains, K); 'pass': shape (tasks, 1, pass_k)."""
    tokens: dict[str, np.ndarray]


def draw(world: World, rng: np.random.Generator) -> Draw:
    """A replicate of the world: feedback does nothing, every request fails at random."""
    n = world.n_tasks
    p = rng.beta(world.a, world.b, n)
    outcomes, tokens = {}, {}
    for key, shape in (("seq", (n, world.chains, world.k)), ("none", (n, world.chains, world.k)),
                       ("pass", (n, 1, world.pass_k))):
        error = rng.random(shape) < world.error_rate
        chance = np.broadcast_to(p[:, None, None], shape).copy()
        if key == "seq" and world.boost:
            chance[:, :, 1:] = 1 - (1 - chance[:, :, 1:]) * (1 - world.boost)
        right = rng.random(shape) < chance
        code = np.where(error, 2, np.where(right, 1, 0))
        if key != "pass":  # a chain stops at its first right answer or error
            stopped_before = np.cumsum(code != 0, axis=2) - (code != 0)
            code = np.where(stopped_before > 0, -1, code)
        outcomes[key] = code
        tokens[key] = rng.integers(100, 121, shape)
    return Draw(p, outcomes, tokens)


def write(db: Path, world: World, replicates: int, seed: int, first: int = 0) -> list[Draw]:
    """Write `replicates` replicates (numbered from `first`) into `db` through seqk's store;
    return each one's draw (its truth is in draw.p)."""
    rng = np.random.default_rng(seed)
    draws = []
    with store.connect(db) as con:
        for r in range(first, first + replicates):
            ids, model = run_ids(r), f"null/m{r:04d}"
            found = draw(world, rng)
            draws.append(found)
            rows = [{"task_index": i + 1, "task_id": f"t{i + 1}", "prompt": f"Say the word w{i + 1}.",
                     "content_hash": f"h{i + 1}"} for i in range(world.n_tasks)]
            records: list[AttemptRecord] = []
            clock = [0]
            for key in ("seq", "none", "pass"):
                metric, chains, k = (("pass@k", 1, world.pass_k) if key == "pass" else
                                     ("seq@k", world.chains, world.k))
                store.insert_run(con, _run_row(ids[key], metric, k, chains,
                                               "none" if key == "none" else "binary", model))
                store.insert_tasks(con, ids[key], rows)
                codes, spent = found.outcomes[key], found.tokens[key]
                for i, c, j in zip(*np.nonzero(codes >= 0), strict=True):
                    records.append(_attempt(ids[key], int(i) + 1, int(c) + 1, int(j) + 1, k,
                                            ("wrong", "right", "error")[codes[i, c, j]],
                                            int(spent[i, c, j]), clock))
            store.append_attempts(con, records)
    return draws


def chains_of(found: Draw, world: World, replicate: int = 0) -> dict[str, RunChains]:
    """The replicate's runs as seqk.analysis.survival reads them from the database (chain_rows),
    built straight from the draw: the same arrays, without the database (fast replicates)."""
    ids = run_ids(replicate)
    out = {}
    for key in ("seq", "none", "pass"):
        code = found.outcomes[key]
        n, c, k = code.shape
        flat, spent = code.reshape(n * c, k), found.tokens[key].reshape(n * c, k)
        ran = flat >= 0
        index = np.arange(1, k + 1)[None, :]
        first_right = np.where((flat == 1).any(axis=1), np.argmax(flat == 1, axis=1) + 1, 0)
        first_error = np.where((flat == 2).any(axis=1), np.argmax(flat == 2, axis=1) + 1, 0)
        valid = (flat == 0) | (flat == 1)
        valid_prefix = np.where(valid.all(axis=1), k, np.argmax(~valid, axis=1))
        settled = ran.sum(axis=1)
        is_seq = key != "pass"
        either = np.where(first_error > 0, first_error, first_right)
        unsolved_cut = np.where((first_right == 0) & (first_error > 0), valid_prefix, -1)
        events = {"censored": first_right, "failures": first_right, "successes": either}
        censored = {"censored": unsolved_cut, "failures": np.full(n * c, -1), "successes": np.full(n * c, -1)}
        cost = np.where(index <= valid_prefix[:, None], spent, 0) * PRICE
        tokens = np.where(index <= valid_prefix[:, None], spent, 0).astype(float)
        task_index = np.arange(1, n + 1)
        out[key] = RunChains(
            run_id=ids[key], metric="seq@k" if is_seq else "pass@k", k=k, chains=c, priced=True,
            task_index=task_index, keys=np.array([f"{i}/h{i}" for i in task_index], dtype=object),
            task_of=np.repeat(np.arange(n), c), n_valid=valid.sum(axis=1), n_success=(flat == 1).sum(axis=1),
            n_error=(flat == 2).sum(axis=1), first_success=first_right, valid_prefix=valid_prefix,
            settled_prefix=settled, events={p: v if is_seq else np.zeros(n * c, dtype=int) for p, v in events.items()},
            censored={p: v if is_seq else np.full(n * c, -1) for p, v in censored.items()},
            cost=cost, tokens=tokens, valid_cost=np.where(valid, spent, 0).sum(axis=1) * PRICE,
            valid_tokens=np.where(valid, spent, 0).sum(axis=1).astype(float))
    return out


def study_rows(found: Draw, runs: dict[str, RunChains], key: str) -> list[dict]:
    """The replicate's run `key` as sql/studies.sql `study_chain_outcomes` rows (one per chain,
    what seqk.run.study_values reads), built from the draw like chains_of."""
    run, code = runs[key], found.outcomes[key]
    flat = code.reshape(-1, code.shape[2])
    ended_in_error = (flat == 2).any(axis=1)  # a chain stops at its error
    return [{"task_index": int(run.task_index[run.task_of[i]]), "chain_index": int(i % code.shape[1]) + 1,
             "first_success": int(run.first_success[i]) or None, "valid_prefix": int(run.valid_prefix[i]),
             "settled_prefix": int(run.settled_prefix[i]), "ended_in_error": bool(ended_in_error[i]),
             "n_valid": int(run.n_valid[i]), "n_success": int(run.n_success[i]),
             "n_attempts": int((flat[i] >= 0).sum())} for i in range(len(flat))]


def truth_value(p: np.ndarray, attempts: int) -> float:
    """The chance that `attempts` independent draws solve a task, averaged over tasks: seq@t at
    t = attempts, a w x d cell at w d, pass@m at m (the null world: boost 0)."""
    return float(np.mean(1 - (1 - p) ** attempts))


def truth_spend(p: np.ndarray, width: int, depth: int) -> float:
    """Expected tokens per task of w chains each stopping at its first success within d draws."""
    return float(width * MEAN_TOKENS * np.mean(sum((1 - p) ** j for j in range(depth))))


def unsolved(p: np.ndarray, attempts: int, boost: float = 0.0) -> np.ndarray:
    """Per task, the chance that a chain's first `attempts` attempts all fail, attempts after the
    first helped by `boost` (0: independent draws with chance p)."""
    return (1 - p) ** attempts * (1 - boost) ** max(attempts - 1, 0)


def truth_cell(p: np.ndarray, width: int, depth: int, *, boost: float = 0.0, stops: bool = True) -> tuple[float, float]:
    """(value, expected tokens per task) of a w x d cell: w chains of at most d attempts, each
    stopping at its first success (`stops`), or w x d samples that never stop (pass@m, boost 0)."""
    if not stops:
        return float(np.mean(1 - (1 - p) ** (width * depth))), width * depth * MEAN_TOKENS
    value = float(np.mean(1 - unsolved(p, depth, boost) ** width))
    return value, float(width * MEAN_TOKENS * np.mean(sum(unsolved(p, j, boost) for j in range(depth))))


def truth_frontier(cells: list[tuple[float, float]], budget: float) -> float:
    """A side's frontier at the budget in truth, from its cells' true (value, spend): the best
    mixture of at most two cells whose expected spend is within it (seqk.analysis.budget's
    estimand), by brute force; NaN when every cell costs more."""
    limit = budget * (1 + 1e-12)
    best = np.nan
    for vi, si in cells:
        if si > limit:
            continue
        best = vi if np.isnan(best) else max(best, vi)
        for vj, sj in cells:
            if sj > limit:
                best = max(best, vi + (vj - vi) * (budget - si) / (sj - si))
    return best


def main() -> None:
    """Write a world and print its truth."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db", type=Path)
    parser.add_argument("--replicates", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    world = World()
    for r, found in enumerate(write(args.db, world, args.replicates, args.seed)):
        print(r, run_ids(r)["seq"], " ".join(f"seq@{t} {truth_value(found.p, t):.3f}"
                                              for t in range(1, world.k + 1)))


if __name__ == "__main__":
    main()
