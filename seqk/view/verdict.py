"""The answer beside each seq@k run, on the run list and on a run's page: the lift (seq@K − pass@K)
with its 95% interval, p and n, the flips each way, the framing effect, and the equal-budget block,
exactly as `seqk report --compare` computes them (seqk.analysis.report, the same seed and
resamples), so the page and the terminal never disagree.

No web framework here: the templates only lay these out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from seqk import store
from seqk.analysis.frontier import EqualBudget
from seqk.analysis.metrics import Comparison
from seqk.analysis.report import report
from seqk.errors import NotFound


@dataclass(frozen=True)
class RunVerdict:
    """What `seqk report --compare` says of one seq@k run against its partners."""

    seq_run_id: str
    k: int
    pass_run_id: str | None
    """The pass@k run the lift and the framing are paired with (None: no partner, no lift)."""
    lift: Comparison | None
    """seq@K − pass@K on the tasks both runs count at K (flips: n_a_only / n_b_only)."""
    framing: Comparison | None
    """seq@1 − pass@1: what the "This is attempt 1 of K" note alone does."""
    framing_vs: str | None
    """What seq@1 is compared with (the partner's sample 1 at the same seed, or Chen's mean)."""
    framing_chen: Comparison | None
    """seq@1 − Chen's pass@1 over all samples, beside a same-seed framing."""
    equal_budget: EqualBudget | None
    """The report's first equal-budget block: against a partner that stops too (a seq@k run without
    feedback, else resampling until success from the budget partner), never pass@m, which does not
    stop and is not spend-matched (issue 27)."""
    oracle: bool
    """The chains stop on the verdict of the LLM judge that also grades them."""
    shows_grading_info: bool
    """The feedback mode shows the actor grading information (not comparable with blind modes)."""

    @property
    def has_partner(self) -> bool:
        """Whether any figure compares this run with a pass@k run."""
        return self.lift is not None or self.equal_budget is not None


def verdicts(db: store.DbLike, run_ids: Sequence[str] = ()) -> dict[str, RunVerdict]:
    """seq@k run id -> its verdict, for the seq@k runs among `run_ids` (exact ids; default all)."""
    try:
        rep = report(list(run_ids), db, compare=True)
    except NotFound:  # an empty database: no run, no verdict
        return {}
    budgets: dict[str, EqualBudget] = {}
    for block in rep.equal_budget:  # the report's order: a partner that stops too first, pass@m last
        budgets.setdefault(block.seq_run_id, block)
    oracle = set(rep.oracle_runs)
    return {run.run_id: RunVerdict(run.run_id, run.k, run.pass_run_id, run.lift, run.framing, run.framing_vs,
                                   run.framing_chen, budgets.get(run.run_id), run.run_id in oracle,
                                   run.shows_grading_info)
            for run in rep.runs if run.metric == "seq@k"}
