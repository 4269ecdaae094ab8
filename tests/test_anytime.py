"""The confidence sequence: it holds the mean at every time at once (the share of simulated
streams whose mean ever leaves it stays below alpha), the study's rule decides a sign in a null
world in at most alpha of the worlds, the sequence at stopping covers, its ends are those of the
paper's capital process (recomputed here by plain loops), and the fast rule used by simulations
decides exactly as the sequence does."""

from __future__ import annotations

import zlib
from math import log, sqrt

import numpy as np
import pytest

from seqk import anytime
from seqk.anytime import confidence_sequence, stopping_looks

ALPHA = 0.05


def wilson_high(k: int, n: int, z: float = 2.576) -> float:
    """Upper end of the 99% Wilson interval of k successes in n."""
    p = k / n
    centre = p + z * z / (2 * n)
    half = z * sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre + half) / (1 + z * z / n)


def paired_world(rng: np.random.Generator, shape: tuple[int, int], discordance: float, lift: float) -> np.ndarray:
    """Per-task differences of two 0/1 outcomes: +1 with (psi + D)/2, -1 with (psi - D)/2."""
    p_up, p_down = (discordance + lift) / 2, (discordance - lift) / 2
    return rng.choice([-1.0, 0.0, 1.0], size=shape, p=[p_down, 1 - discordance, p_up])


def world(rng: np.random.Generator, kind: str, shape: tuple[int, int], mean: float) -> np.ndarray:
    """Streams of differences in [-1, 1] with the given mean (at most 0.2), of three shapes."""
    if kind == "rare flips":
        return paired_world(rng, shape, 0.2, mean)
    if kind == "common flips":
        return paired_world(rng, shape, 0.6, mean)
    # A seq@k outcome (0/1) minus a pass@k partner's Chen estimate (a fraction).
    seq = rng.random(shape) < 0.5 + mean
    partner = rng.binomial(4, 0.5, size=shape) / 4
    return seq - partner + 0.0


def ever_leaves(d: np.ndarray, mean: float) -> np.ndarray:
    """Per stream: whether the true mean is ever outside the sequence (either capital process
    reaches 2/alpha at it), on the [0, 1] scale the sequence works in."""
    x = (d + 1) / 2
    m = (mean + 1) / 2
    bets = anytime._bets(x, ALPHA)
    up = anytime._log_capital_max(x, bets, m, +1)[:, -1]
    down = anytime._log_capital_max(x, bets, m, -1)[:, -1]
    return (up >= log(2 / ALPHA)) | (down >= log(2 / ALPHA))


@pytest.mark.parametrize("kind", ["rare flips", "common flips", "chen partner"])
@pytest.mark.parametrize("mean", [0.0, 0.15])
def test_the_mean_leaves_the_sequence_in_at_most_alpha_of_the_streams(kind: str, mean: float) -> None:
    """Time-uniform coverage: 3,000 streams of 500 tasks each, looked at after every task."""
    rng = np.random.default_rng([7, zlib.crc32(kind.encode()), int(mean * 100)])
    d = world(rng, kind, (3000, 500), mean)
    left = int(ever_leaves(d, mean).sum())
    assert wilson_high(left, len(d)) <= ALPHA, (kind, mean, left)


@pytest.mark.parametrize("discordance", [0.05, 0.3, 0.6, 1.0])
def test_the_study_decides_a_sign_in_at_most_alpha_of_null_worlds(discordance: float) -> None:
    """The study's rule (a look every 16 tasks, up to 600) in 10,000 worlds where seq and its
    partner are equal: the share that decide either sign, with the 99% upper bound of that share
    below alpha (10,000 replicates tell the rule's 0.036 in the worst world, every task a flip,
    from 0.05)."""
    rng = np.random.default_rng([11, int(discordance * 100)])
    d = paired_world(rng, (10_000, 600), discordance, 0.0)
    code, used = stopping_looks(d, looks=range(16, 601, 16), alpha=ALPHA)
    decided = int((code != 0).sum())
    assert wilson_high(decided, len(d)) <= ALPHA, (discordance, decided)
    assert used[code == 0].min() == 592  # an undecided study used every look


def test_with_ranges_for_errors_the_null_world_stays_below_alpha() -> None:
    """5% of tasks censored (an error): they enter as the range their outcome could take, and the
    rule still decides a sign in at most alpha of null worlds."""
    rng = np.random.default_rng(13)
    d = paired_world(rng, (4000, 400), 0.3, 0.0)
    censored = rng.random(d.shape) < 0.05
    low, high = np.where(censored, np.maximum(d - 1, -1), d), np.where(censored, np.minimum(d + 1, 1), d)
    code, _ = stopping_looks(low, high, looks=range(10, 401, 10))
    assert wilson_high(int((code != 0).sum()), len(d)) <= ALPHA


@pytest.mark.parametrize("lift", [0.05, 0.15])
def test_the_sequence_at_stopping_covers_the_lift(lift: float) -> None:
    """Coverage at the time the study stops (decided or out of tasks): the share of 600 studies
    whose sequence at stopping holds the true lift is at least 1 - alpha."""
    rng = np.random.default_rng([17, int(lift * 100)])
    d = paired_world(rng, (600, 300), 0.4, lift)
    code, used = stopping_looks(d, looks=range(10, 301, 10))
    covered = 0
    for stream, n in zip(d, used, strict=True):
        state = confidence_sequence(stream[:n])
        covered += state.low <= lift <= state.high
    assert covered / len(d) >= 1 - ALPHA
    assert (code == 1).any() and not (code == -1).all()


def naive_capital(x: list[float], m: float, side: int) -> list[float]:
    """K+_t(m) (side 1) or K-_t(m) (side -1) for t = 1..n by the paper's formulas, in plain loops."""
    out, capital, total, squares = [], 1.0, 0.0, 0.0
    for t, value in enumerate(x, start=1):
        variance = (0.25 + squares) / t  # s2_{t-1}
        bet = sqrt(2 * log(2 / ALPHA) / (variance * t * log(1 + t)))
        cap = 0.5 / m if side > 0 and m > 0 else 0.5 / (1 - m) if side < 0 and m < 1 else float("inf")
        capital *= 1 + side * min(bet, cap) * (value - m)
        out.append(capital)
        total += value
        squares += (value - (0.5 + total) / (t + 1)) ** 2
    return out


def test_the_ends_are_where_the_papers_capital_process_crosses_2_over_alpha() -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        d = paired_world(rng, (1, int(rng.integers(5, 120))), 0.5, float(rng.uniform(-0.3, 0.3)))[0]
        x = list((d + 1) / 2)
        state = confidence_sequence(d)
        for end, side, outward in ((state.low, +1, -1), (state.high, -1, +1)):
            m = (end + 1) / 2
            if 0 < m < 1:
                inside = max(naive_capital(x, m - outward * 1e-6, side))
                outside = max(naive_capital(x, m + outward * 1e-6, side))
                assert inside < 2 / ALPHA <= outside, (end, side)


def test_the_sequence_only_shrinks_and_ranges_only_widen_it() -> None:
    rng = np.random.default_rng(5)
    d = paired_world(rng, (1, 200), 0.4, 0.1)[0]
    states = [confidence_sequence(d[:t]) for t in range(1, 201)]
    lows, highs = [s.low for s in states], [s.high for s in states]
    assert lows == sorted(lows) and highs == sorted(highs, reverse=True)
    assert confidence_sequence(d, d) == states[-1]
    wide = confidence_sequence(np.maximum(d - 0.5, -1), np.minimum(d + 0.5, 1))
    assert wide.low <= states[-1].low and wide.high >= states[-1].high


def test_before_any_task_the_sequence_is_the_whole_range() -> None:
    state = confidence_sequence([])
    assert (state.n, state.low, state.high, state.decision) == (0, -1.0, 1.0, "undecided")


@pytest.mark.parametrize("margin", [0.0, 0.1, 0.25])
def test_the_fast_rule_decides_exactly_as_the_sequence(margin: float) -> None:
    """stopping_looks (what plan, bench and the null-world tests use) against confidence_sequence
    at every look, with ranges, including ends that land near 0 and near ±margin; the printed
    interval excludes 0 exactly when a sign is decided, and lies inside ±margin exactly when no
    practical difference is."""
    rng = np.random.default_rng([19, int(margin * 100)])
    codes = {1: "seq_better", -1: "partner_better", 2: "no_practical_difference", 0: "undecided"}
    for _ in range(60):
        n = int(rng.integers(20, 150))
        d = paired_world(rng, (1, n), 0.5, float(rng.uniform(-0.3, 0.3)) * (rng.random() < 0.7))[0]
        censored = rng.random(n) < 0.05
        low, high = np.where(censored, -1.0, d), np.where(censored, 1.0, d)
        looks = list(range(5, n + 1, 5))
        code, used = stopping_looks(low[None], high[None], looks=looks, margin=margin)
        seen = "undecided"
        for t in looks:
            state = confidence_sequence(low[:t], high[:t], margin=margin)
            assert (state.low > 0 or state.high < 0) == (state.excludes_zero is not None)
            if margin:
                assert (-margin < state.low and state.high < margin) == state.within_margin
            if state.decision != "undecided":
                seen = state.decision
                assert used[0] == t
                break
        assert codes[int(code[0])] == seen


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="alpha"):
        confidence_sequence([0.1], alpha=1.5)
    with pytest.raises(ValueError, match="lie in"):
        confidence_sequence([1.5])
    with pytest.raises(ValueError, match="low <= high"):
        confidence_sequence([0.5], [0.1])
