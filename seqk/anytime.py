"""An anytime-valid confidence sequence for the mean of bounded observations, and the stopping
rule of a study built on it (one public procedure, `confidence_sequence`, and its vectorised
twin for simulations, `stopping_looks`).

The sequence is Waudby-Smith & Ramdas's hedged capital process with predictable plug-in bets
(I. Waudby-Smith and A. Ramdas, "Estimating means of bounded random variables by betting",
JRSS-B 86(1):1-27, 2024; Section 4.3, eq. (26)-(27), with the bets of their Remark 3 / eq. (26)
and truncation c = 1/2): for observations x_i in [0, 1] and a candidate mean m,

    K+_t(m) = prod_{i<=t} (1 + l+_i(m) (x_i - m)),   K-_t(m) = prod_{i<=t} (1 - l-_i(m) (x_i - m)),
    l+_i(m) = min(l_i, c/m),  l-_i(m) = min(l_i, c/(1 - m)),
    l_i = sqrt(2 log(2/alpha) / (s2_{i-1} i log(1 + i))),
    s2_i = (1/4 + sum_{j<=i} (x_j - mu_j)^2) / (i + 1),  mu_i = (1/2 + sum_{j<=i} x_j) / (i + 1).

Each is a nonnegative martingale when m is the mean, so by Ville's inequality either one ever
reaching 2/alpha has probability at most alpha/2; m is excluded at t when, at some s <= t, one of
them has. The set left is an interval at every t (K+ falls as m grows and K- rises), shrinking
in t (the running intersection over every time), and it holds the mean at every t at once with
probability at least 1 - alpha: a study may look after every task and stop whenever it likes.

A task whose value is not known exactly (an error left it censored) enters as a range
[low, high]: the lower end of the sequence is made from the lows (K+), the upper from the highs
(K-). The mean of the lows is at most the mean of the values and the mean of the highs at least,
so the sequence still holds the mean of the values (a worst-case, Manski-style bound), only wider.

seqk computes the ends exactly (bisection to 1e-12 on m) rather than on a grid, and always with
0 and the margin's ends among the points it brackets, so "the sequence excludes 0" and "the
decision is a sign" are the same comparison: an interval and a decision printed side by side
never disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import log

import numpy as np

METHOD = ("Waudby-Smith & Ramdas (JRSS-B 2024) hedged betting confidence sequence, predictable "
          "plug-in bets, running intersection")
TRUNCATION = 0.5
"""c in the bets' truncation c/m and c/(1 - m) (the paper's choice)."""
SEQ_BETTER, PARTNER_BETTER, NO_PRACTICAL_DIFFERENCE, UNDECIDED = (
    "seq_better", "partner_better", "no_practical_difference", "undecided")


@dataclass(frozen=True)
class SequenceState:
    """The confidence sequence after n observations, on the observations' own scale."""

    n: int
    estimate: float | None
    """Mean of the observations (of the ranges' midpoints); None before the first."""
    low: float
    high: float
    """The sequence's ends: every mean it has not excluded lies in [low, high]."""
    alpha: float
    excludes_zero: str | None
    """'below' when the whole sequence is above 0, 'above' when below it, else None."""
    within_margin: bool
    """The sequence lies inside [-margin, margin] (always False for margin 0)."""

    @property
    def decision(self) -> str:
        """seq_better | partner_better | no_practical_difference | undecided."""
        if self.excludes_zero == "below":
            return SEQ_BETTER
        if self.excludes_zero == "above":
            return PARTNER_BETTER
        return NO_PRACTICAL_DIFFERENCE if self.within_margin else UNDECIDED


def _unit(values: np.ndarray, lower: float, upper: float) -> np.ndarray:
    return (values - lower) / (upper - lower)


def _bets(x: np.ndarray, alpha: float) -> np.ndarray:
    """The predictable plug-in bets l_t along the last axis (they use x_1..x_{t-1} only)."""
    t = np.arange(1, x.shape[-1] + 1, dtype=float)
    mu = (0.5 + np.cumsum(x, axis=-1)) / (t + 1)
    s2 = (0.25 + np.cumsum((x - mu) ** 2, axis=-1)) / (t + 1)
    s2_before = np.concatenate([np.full(x.shape[:-1] + (1,), 0.25), s2[..., :-1]], axis=-1)
    return np.sqrt(2 * log(2 / alpha) / (s2_before * t * np.log1p(t)))


def _log_capital_max(x: np.ndarray, bets: np.ndarray, m: float, side: int) -> np.ndarray:
    """max over s <= t of log K+_s(m) (side +1) or log K-_s(m) (side -1), for every t."""
    if side > 0:
        bet = bets if m <= 0 else np.minimum(bets, TRUNCATION / m)
    else:
        bet = bets if m >= 1 else np.minimum(bets, TRUNCATION / (1 - m))
    # Each factor is at least 1 - c = 1/2: no log of 0.
    return np.maximum.accumulate(np.cumsum(np.log1p(side * bet * (x - m)), axis=-1), axis=-1)


def _end(rejected_at: list[tuple[float, bool]], reject: Callable[[float], bool]) -> float:
    """The sequence's end on one side, given the landmarks (m, rejected?) sorted so that the
    rejected ones come first: bisect between the last rejected and the first accepted landmark
    and return an accepted point, so a landmark's status and the end never disagree."""
    accepted = next((m for m, r in rejected_at if not r), None)
    rejected = [m for m, r in rejected_at if r]
    if not rejected:
        return rejected_at[0][0]
    assert accepted is not None  # the far end of the range is never rejected
    out = rejected[-1]
    for _ in range(45):
        middle = (out + accepted) / 2
        if reject(middle):
            out = middle
        else:
            accepted = middle
    return accepted


def confidence_sequence(lows: Sequence[float] | np.ndarray, highs: Sequence[float] | np.ndarray | None = None,
                        *, alpha: float = 0.05, margin: float = 0.0, lower: float = -1.0,
                        upper: float = 1.0) -> SequenceState:
    """The sequence after the observations `lows` (with `highs`, each observation is the range
    [lows[i], highs[i]]), in the order they came, all in [lower, upper] (default [-1, 1]: a paired
    difference of two values in [0, 1]). `margin` > 0: whether the sequence lies inside
    ±margin (no practical difference) is decided exactly, like whether it excludes 0."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    lo = np.asarray(lows, dtype=float)
    hi = lo if highs is None else np.asarray(highs, dtype=float)
    if lo.shape != hi.shape or lo.ndim != 1:
        raise ValueError("lows and highs must be two sequences of the same length")
    if len(lo) and (lo.min() < lower or hi.max() > upper or (lo > hi).any()):
        raise ValueError(f"observations must lie in [{lower}, {upper}] with low <= high")
    n = len(lo)
    if n == 0:
        return SequenceState(0, None, lower, upper, alpha, None, False)
    x_lo, x_hi = _unit(lo, lower, upper), _unit(hi, lower, upper)
    bets_lo, bets_hi = _bets(x_lo, alpha), _bets(x_hi, alpha)
    threshold = log(2 / alpha)

    def below(m: float) -> bool:  # m is under the sequence: K+ has reached 2/alpha
        return bool(_log_capital_max(x_lo, bets_lo, m, +1)[-1] >= threshold)

    def above(m: float) -> bool:  # m is over the sequence: K- has reached 2/alpha
        return bool(_log_capital_max(x_hi, bets_hi, m, -1)[-1] >= threshold)

    zero = float(_unit(np.array(0.0), lower, upper))
    marks = sorted({0.0, 1.0, zero} | ({float(_unit(np.array(v), lower, upper)) for v in (-margin, margin)}
                                        if margin > 0 else set()))
    marks = [m for m in marks if 0.0 <= m <= 1.0]
    low_marks = [(m, below(m)) for m in marks]
    high_marks = [(m, above(m)) for m in reversed(marks)]
    low_u, high_u = _end(low_marks, below), _end(high_marks, above)
    status_low, status_high = dict(low_marks), dict(high_marks)
    excludes = "below" if status_low[zero] else "above" if status_high[zero] else None
    within = False
    if margin > 0:
        m_lo, m_hi = (float(_unit(np.array(v), lower, upper)) for v in (-margin, margin))
        within = bool(status_low.get(m_lo, m_lo <= 0) and status_high.get(m_hi, m_hi >= 1))
    scale = upper - lower
    return SequenceState(n, float((lo.mean() + hi.mean()) / 2), lower + scale * low_u,
                         lower + scale * high_u, alpha, excludes, within)


def stopping_looks(lows: np.ndarray, highs: np.ndarray | None = None, *, alpha: float = 0.05,
                   margin: float = 0.0, looks: Sequence[int], lower: float = -1.0,
                   upper: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """The study's rule on many simulated streams at once: `lows` (and `highs`) of shape
    (streams, tasks); the rule looks after each number of tasks in `looks` (increasing) and stops
    at the first look where `confidence_sequence` would decide. Returns (decision code per
    stream: 1 seq_better, -1 partner_better, 2 no_practical_difference, 0 undecided at the last
    look; the number of tasks used, i.e. the look it stopped at or the last look).

    Only the capital at 0 and at ±margin is needed for the decision, so this costs a few
    cumulative sums per stream; tests/test_anytime.py holds it equal to confidence_sequence."""
    lo = np.atleast_2d(np.asarray(lows, dtype=float))
    hi = lo if highs is None else np.atleast_2d(np.asarray(highs, dtype=float))
    x_lo, x_hi = _unit(lo, lower, upper), _unit(hi, lower, upper)
    bets_lo, bets_hi = _bets(x_lo, alpha), _bets(x_hi, alpha)
    threshold = log(2 / alpha)
    zero = float(_unit(np.array(0.0), lower, upper))
    idx = np.asarray(looks, dtype=int) - 1
    seq = _log_capital_max(x_lo, bets_lo, zero, +1)[:, idx] >= threshold
    partner = _log_capital_max(x_hi, bets_hi, zero, -1)[:, idx] >= threshold
    code = np.where(seq, 1, np.where(partner, -1, 0))
    if margin > 0:
        m_lo, m_hi = (float(_unit(np.array(v), lower, upper)) for v in (-margin, margin))
        inside = ((_log_capital_max(x_lo, bets_lo, m_lo, +1)[:, idx] >= threshold if m_lo > 0 else True)
                  & (_log_capital_max(x_hi, bets_hi, m_hi, -1)[:, idx] >= threshold if m_hi < 1 else True))
        code = np.where(code == 0, np.where(inside, 2, 0), code)
    decided = code != 0
    first = np.where(decided.any(axis=1), decided.argmax(axis=1), len(idx) - 1)
    rows = np.arange(len(code))
    return code[rows, first], np.asarray(looks)[first]
