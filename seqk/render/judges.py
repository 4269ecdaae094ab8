"""`seqk judges` as text: two judges on identical answers (seqk.analysis.judges.JudgeComparison)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from seqk.analysis.judges import JudgeComparison


def judge_lines(c: JudgeComparison) -> list[str]:
    """The comparison in a few lines of plain text (`seqk judges`, and `seqk rejudge` at its end)."""
    def pct(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.1%}"

    # A kappa that rounds to zero prints 0.000: "-0.000" reads as a (tiny) disagreement.
    kappa = "n/a (one verdict for everything)" if c.kappa is None else f"{c.kappa + 0.0:.3f}".replace(
        "-0.000", "0.000")
    return [
        f"judges on identical answers: A = {c.judge_a} ({c.run_a}) vs B = {c.judge_b} ({c.run_b})",
        f"  answers both judged: {c.n}; agreement {pct(c.agreement)}; Cohen's kappa {kappa}",
        f"  passed: A {c.both_pass + c.a_only} ({pct(c.pass_rate_a)}), B {c.both_pass + c.b_only} "
        f"({pct(c.pass_rate_b)}); flips: {c.a_only} passed by A only, {c.b_only} passed by B only",
    ]
