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


# --- equal budget -------------------------------------------------------------------------------
# Each run's frontier cells from its attempts and calls, per task (no errored attempt in these
# runs): a seq@k run's w x d cell is 1 - C(m_d, w)/C(n, w) over a task's n chains, m_d of them
# unsolved through d, costing w x the mean over its chains of their spend through d (a chain stops
# at its success); a pass@k run's resample-until-success cell is 1 - C(n - c, w d)/C(n, w d),
# costing w x the task's mean spend per sample x sum_{j<d} C(n - c, j)/C(n, j). A cell's figure
# is the mean over tasks. Then each side's frontier at each budget (the best mixture of at most two
# cells whose expected spend is within it, by brute force), a task bootstrap that takes both again in
# every resample (over the cells within the budget on all tasks and the cheapest frontier vertex
# dearer than it), its percentile interval, and the max-|t| band over the budgets.


def slots(db, run_id: str) -> dict[int, dict[int, list[tuple[int, bool, float]]]]:
    """task -> chain -> [(attempt, success, US$ of every call of that attempt)] in order."""
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT a.task_index, a.chain_index, a.attempt_index, a.success, sum(c.cost_usd) FROM attempts a "
            "JOIN calls c USING (run_id, task_index, chain_index, attempt_index) WHERE a.run_id = ? "
            "AND a.status = 'ok' GROUP BY ALL ORDER BY ALL", [run_id]).fetchall()
    out: dict[int, dict[int, list[tuple[int, bool, float]]]] = {}
    for task, chain, index, success, cost in rows:
        out.setdefault(task, {}).setdefault(chain, []).append((index, bool(success), float(cost)))
    return out


def frontier(db, run_id: str, metric: str, k: int) -> tuple[list[int], dict[tuple[int, int], tuple]]:
    """(tasks, {(w, d): (per-task values, per-task spends)})."""
    found = slots(db, run_id)
    tasks = sorted(found)
    cells: dict[tuple[int, int], tuple] = {}
    if metric == "seq@k":
        n_chains = min(len(found[t]) for t in tasks)
        for w in range(1, n_chains + 1):
            for d in range(1, k + 1):
                values, spends = [], []
                for t in tasks:
                    chains = list(found[t].values())
                    unsolved = sum(not any(s and i <= d for i, s, _ in c) for c in chains)
                    values.append(1 - comb(unsolved, w, exact=True) / comb(len(chains), w, exact=True))
                    spends.append(w * np.mean([sum(x for i, _, x in c if i <= d) for c in chains]))
                cells[(w, d)] = (np.array(values), np.array(spends))
    else:
        for w in range(1, k + 1):
            for d in range(1, k // w + 1):
                values, spends = [], []
                for t in tasks:
                    samples = [x for c in found[t].values() for x in c]
                    n, c = len(samples), sum(s for _, s, _ in samples)
                    mean = np.mean([x for _, _, x in samples])
                    values.append(1 - comb(n - c, w * d, exact=True) / comb(n, w * d, exact=True))
                    spends.append(w * mean * sum(comb(n - c, j, exact=True) / comb(n, j, exact=True)
                                                 for j in range(d)))
                cells[(w, d)] = (np.array(values), np.array(spends))
    return tasks, cells


def _envelope(points: list[tuple[float, float]], budget: float) -> tuple[float, tuple[int, int | None, float]]:
    """The best expected value of a mixture of at most two of the (value, spend) points whose expected
    spend is within the budget, by brute force over every point and pair: (value, (i, j, share on j));
    j None for a point alone. NaN when no point is within the budget."""
    best, how = np.nan, (-1, None, 0.0)
    for i, (vi, si) in enumerate(points):
        if si > budget * (1 + 1e-9) + 1e-15:
            continue
        if not vi <= best:
            best, how = vi, (i, None, 0.0)
        for j, (vj, sj) in enumerate(points):
            if sj > budget * (1 + 1e-9) + 1e-15:
                share = (budget - si) / (sj - si)
                mixed = vi + share * (vj - vi)
                if mixed > best + 1e-12:
                    best, how = mixed, (i, j, share)
    return best, how


def _vertices(figures: dict[tuple[int, int], tuple[float, float]]) -> list[tuple[int, int]]:
    """The cells on the frontier under mixing: no mixture of the other cells spending no more is as
    good, and none cheaper is better."""
    out, seen = [], set()
    for key, (value, spend) in figures.items():
        if (value, spend) in seen:  # the same figure twice (pass@11 and pass@12 when 11 samples solve all)
            continue
        seen.add((value, spend))
        others = [f for k, f in figures.items() if f != (value, spend)]
        beaten = bool(others) and not np.isnan(_envelope(others, spend)[0]) \
            and value <= _envelope(others, spend)[0] + 1e-12
        if not beaten and all(v < value - 1e-12 or s >= spend for v, s in others):
            out.append(key)
    return sorted(out, key=lambda k: figures[k][1])


def _frontier(values: np.ndarray, spends: np.ndarray, budget: float) -> np.ndarray:
    """Per row (a resample), `_envelope` of its cells at the budget, every point and pair in turn."""
    limit = budget * (1 + 1e-9) + 1e-15
    best = np.full(len(values), -np.inf)
    for i in range(values.shape[1]):
        inside = spends[:, i] <= limit
        best = np.where(inside, np.maximum(best, values[:, i]), best)
        for j in range(values.shape[1]):
            straddle = inside & (spends[:, j] > limit)
            with np.errstate(divide="ignore", invalid="ignore"):
                share = (budget - spends[:, i]) / (spends[:, j] - spends[:, i])
                mixed = values[:, i] + share * (values[:, j] - values[:, i])
            best = np.where(straddle, np.maximum(best, mixed), best)
    return np.where(np.isfinite(best), best, np.nan)


def equal_budget(a: tuple, b: tuple, n_boot: int = 20_000, alpha: float = 0.05) -> dict:
    """Budgets, each side's frontier (cell, the cell mixed in, value), a − b, the percentile interval,
    the band, from two `frontier`s of runs whose tasks are the same."""
    (tasks_a, cells_a), (tasks_b, cells_b) = a, b
    shared = sorted(set(tasks_a) & set(tasks_b))
    ia, ib = [tasks_a.index(t) for t in shared], [tasks_b.index(t) for t in shared]
    sides = [{key: (v[ia], s[ia]) for key, (v, s) in cells_a.items()},
             {key: (v[ib], s[ib]) for key, (v, s) in cells_b.items()}]
    means = [{key: (v.mean(), s.mean()) for key, (v, s) in side.items()} for side in sides]
    va, vb = _vertices(means[0]), _vertices(means[1])
    low, high = max(means[0][va[0]][1], means[1][vb[0]][1]), min(means[0][va[-1]][1], means[1][vb[-1]][1])
    budgets = sorted({round(means[i][k][1], 15) for i, vs in enumerate((va, vb)) for k in vs
                      if low * (1 - 1e-9) <= means[i][k][1] <= high * (1 + 1e-9)})
    rng = np.random.default_rng(11)
    picks = rng.integers(0, len(shared), size=(n_boot, len(shared)))
    rows, draws = [], []
    for budget in budgets:
        row: dict = {"budget": budget}
        per_side = []
        for name, side, figures, vertices in (("a", sides[0], means[0], va), ("b", sides[1], means[1], vb)):
            # the cells within the budget, and the cheapest vertex dearer than it (mixed in between vertices)
            keys = [key for key, (_, s) in figures.items() if s <= budget * (1 + 1e-9) + 1e-15]
            keys += [k for k in vertices if figures[k][1] > budget * (1 + 1e-9) + 1e-15][:1]
            value, (i, j, share) = _envelope([figures[k] for k in keys], budget)
            row[name] = (keys[i], None if j is None else keys[j], share, value)
            values = np.column_stack([side[key][0][picks].mean(axis=1) for key in keys])
            spends = np.column_stack([side[key][1][picks].mean(axis=1) for key in keys])
            per_side.append(_frontier(values, spends, budget))
        row["difference"] = row["a"][3] - row["b"][3]
        d = per_side[0] - per_side[1]
        d = d[~np.isnan(d)]
        row["low"], row["high"] = (float(x) for x in np.percentile(d, [100 * alpha / 2, 100 * (1 - alpha / 2)]))
        rows.append(row)
        draws.append(per_side[0] - per_side[1])
    replicates = np.column_stack(draws)
    points = np.array([r["difference"] for r in rows])
    se = np.nanstd(replicates, axis=0, ddof=1)
    varies = se > 0
    worst = np.nanmax(np.abs(replicates[:, varies] - points[varies]) / se[varies], axis=1)
    critical = float(np.quantile(worst, 1 - alpha)) if varies.any() else 0.0
    for r, s in zip(rows, se, strict=True):
        r["band"] = (r["difference"] - critical * s, r["difference"] + critical * s)
    return {"rows": rows, "critical": critical, "n_shared": len(shared)}


def crossover(rows: list[dict]) -> dict | None:
    """Where the order changes along the budgets: the first budget whose difference has the other sign
    than the first non-zero one; from the band, the last budget before which the early leader is
    ahead at every budget (low), the first at which the band puts the other ahead (high)."""
    signs = [(r, np.sign(r["difference"])) for r in rows if r["difference"] != 0]
    changes = [r for (r, s) in signs if s != signs[0][1]] if signs else []
    if not changes:
        return None
    first = signs[0][1]

    def ahead(r: dict, sign: float) -> bool:
        return r["band"][0] > 0 if sign > 0 else r["band"][1] < 0

    low = next(r["budget"] for r in rows if not ahead(r, first))
    high = next((r["budget"] for r in rows if ahead(r, -first)), None)
    led = any(ahead(r, first) for r in rows if high is None or r["budget"] < high)
    return {"budget": changes[0]["budget"], "before": "a" if first > 0 else "b", "low": low, "high": high,
            "established": high is not None and led}
