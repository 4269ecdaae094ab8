"""Two judges on identical answers: how often they agree, the flips each way, Cohen's kappa.

The answers are matched by the attempt that wrote them (sql/judges.sql): a re-judging run's
slot stands for its source attempt, so a run and its re-judging, or two re-judgings of one
run, compare verdict for verdict. Only slots both judges ruled on (valid in both) count.
"""

from __future__ import annotations

from dataclasses import dataclass

from seqk import store
from seqk.errors import NotFound
from seqk.store import queries


@dataclass(frozen=True)
class JudgeComparison:
    """Verdicts of run A's judge and run B's judge on the answers both graded."""

    run_a: str
    run_b: str
    judge_a: str
    """Run A's judge model, or its verifier's name."""
    judge_b: str
    n: int
    """Answers both judges ruled on."""
    both_pass: int
    a_only: int
    """Passed by A, failed by B."""
    b_only: int
    """Failed by A, passed by B."""
    both_fail: int

    @property
    def agreement(self) -> float | None:
        """Share of answers with the same verdict."""
        return (self.both_pass + self.both_fail) / self.n if self.n else None

    @property
    def pass_rate_a(self) -> float | None:
        """Share of the answers A passed."""
        return (self.both_pass + self.a_only) / self.n if self.n else None

    @property
    def pass_rate_b(self) -> float | None:
        """Share of the answers B passed."""
        return (self.both_pass + self.b_only) / self.n if self.n else None

    @property
    def kappa(self) -> float | None:
        """Cohen's kappa: agreement beyond what the two pass rates give by chance. None when
        chance agreement is total (both judges gave one verdict to everything)."""
        if not self.n:
            return None
        a, b = self.pass_rate_a or 0.0, self.pass_rate_b or 0.0
        chance = a * b + (1 - a) * (1 - b)
        if chance >= 1.0:
            return None
        return ((self.agreement or 0.0) - chance) / (1 - chance)


def compare_judges(run_a: str, run_b: str | None = None, db: store.DbLike = None) -> JudgeComparison:
    """Compare the judges of two runs on identical answers; with one run, a re-judging run
    against the run it re-judged. Each run may be named by an id, a glob or a prefix that
    matches exactly one run."""
    with store.connect(db, read_only=True) as con:
        run_a = store.resolve_run_id(con, run_a)
        run_b = None if run_b is None else store.resolve_run_id(con, run_b)
        if run_b is None:
            found = queries.rejudge_source(con, run_id=run_a)
            source = found[0] if found else None
            if source is None or source[0] is None:
                raise NotFound(f"{run_a} is not a re-judging run: name the two runs to compare")
            run_a, run_b = source[0], run_a
        names = []
        for run_id in (run_a, run_b):
            row = store.get_run(con, run_id)
            if row is None:
                raise NotFound(f"no run {run_id!r}; `seqk status` lists them")
            names.append(row["judge_model"] or row["verifier"])
        [(n, both_pass, a_only, b_only, both_fail)] = queries.judge_agreement(
            con, run_a=run_a, run_b=run_b)
    return JudgeComparison(run_a, run_b, names[0], names[1], n, both_pass, a_only, b_only, both_fail)


def describe(c: JudgeComparison) -> list[str]:
    """The comparison in a few lines of plain text (the CLI prints them)."""
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
