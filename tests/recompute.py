"""An independent recomputation of `seqk compare`'s figures from the attempts table, with numpy and
scipy only (never seqk's functions): per-task values, Tango's score interval and test through a
numerically maximised restricted likelihood, a paired bootstrap of 20,000 task resamples."""

from __future__ import annotations

import math

import duckdb
import numpy as np
from scipy.optimize import brentq, minimize_scalar
from scipy.special import comb, erfc


def attempts(db, run_id: str) -> list[tuple[int, int, int, bool]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT task_index, chain_index, attempt_index, success FROM attempts "
                           "WHERE run_id = ? AND status = 'ok'", [run_id]).fetchall()


def task_values(db, run_id: str, metric: str, t: int) -> dict[int, float]:
    """seq@t of each task (the mean over its chains of 'solved within t'), or Chen's pass@t."""
    chains: dict[int, dict[int, list[tuple[int, bool]]]] = {}
    for task, chain, index, success in attempts(db, run_id):
        chains.setdefault(task, {}).setdefault(chain, []).append((index, success))
    out = {}
    for task, by_chain in chains.items():
        if metric == "seq@k":
            out[task] = float(np.mean([any(s and i <= t for i, s in rows) for rows in by_chain.values()]))
        else:
            samples = [s for rows in by_chain.values() for _, s in rows]
            n, c = len(samples), sum(samples)
            out[task] = 1 - comb(n - c, t, exact=True) / comb(n, t, exact=True)
    return out


def tango(b: int, c: int, n: int, alpha: float = 0.05) -> tuple[float, float, float]:
    """(low, high, p at 0) of the continuity-corrected score test of P(a only) - P(b only) = d, its
    nuisance P(b only) maximised numerically under each d (Tango 1998, solved here by scipy)."""

    def p_value(d: float) -> float:
        def nll(q: float) -> float:
            parts = ((b, q + d), (c, q), (n - b - c, 1 - 2 * q - d))
            return -sum(k * math.log(x) for k, x in parts if k)

        lo, hi = max(0.0, -d), (1 - d) / 2
        q = minimize_scalar(nll, bounds=(lo + 1e-15, hi - 1e-15), method="bounded",
                            options={"xatol": 1e-14}).x
        excess = max(0.0, abs(b - c - n * d) - 1)
        return 1.0 if excess == 0 else float(erfc(excess / math.sqrt(n * (2 * q + d * (1 - d))) / math.sqrt(2)))

    estimate = (b - c) / n
    edge = 1 - 1e-9
    low = -1.0 if p_value(-edge) >= alpha else brentq(lambda d: p_value(d) - alpha, -edge, estimate, xtol=1e-12)
    high = 1.0 if p_value(edge) >= alpha else brentq(lambda d: p_value(d) - alpha, estimate, edge, xtol=1e-12)
    return low, high, p_value(0.0)


def bootstrap(a: np.ndarray, b: np.ndarray, n_boot: int = 20_000) -> tuple[float, float]:
    rng = np.random.default_rng(7)
    picks = rng.integers(0, len(a), size=(n_boot, len(a)))
    diffs = a[picks].mean(axis=1) - b[picks].mean(axis=1)
    low, high = np.percentile(diffs, [2.5, 97.5])
    return float(low), float(high)


def paired(db, run_a: str, metric_a: str, run_b: str, metric_b: str, t: int) -> tuple[np.ndarray, np.ndarray]:
    """Both runs' values at t on the tasks both count (every task of these runs has one content)."""
    va, vb = task_values(db, run_a, metric_a, t), task_values(db, run_b, metric_b, t)
    shared = sorted(set(va) & set(vb))
    return np.array([va[i] for i in shared]), np.array([vb[i] for i in shared])


def flip_counts(a: np.ndarray, b: np.ndarray) -> tuple[int, int, int]:
    """(tasks, solved by a only, by b only) of two 0/1 outcome vectors."""
    return len(a), int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 1)).sum())
