"""What a report says beside its figures: how each was estimated, what it assumes, and what it
cannot show (seqk.analysis.report puts them under its tables)."""

from __future__ import annotations

from typing import Any

from seqk.analysis.frontier import PARTNERS

GRADING_MARK = "†"
"""Marks a run whose feedback mode shows the actor grading information (footnoted)."""


def notes(rep: Any) -> list[str]:
    """Every note of a report (seqk.analysis.report.Report), most important first."""
    out = _primary(rep) + _errors(rep) + _pairing(rep)
    seq_runs = [r for r in rep.runs if r.metric == "seq@k"]
    if seq_runs:
        out.append("seq@k stops on the grading verifier's verdict and pass@k is scored by it: both "
                   "are oracle upper bounds of what a model would do without that verifier (Huang "
                   "et al., ICLR 2024). A depth d < K cell is the first d attempts of a K-attempt "
                   "policy: its prompts still say 'attempt t of K'.")
    for run_id in rep.oracle_runs:
        out.append(f"{run_id}: its chains stop on the verdict of the LLM judge that also grades "
                   "them, so part of seq@k's gain may be an oracle effect (Huang et al., ICLR 2024).")
    out += _budget(rep)
    if any(r.metric == "pass@k" for r in rep.runs):
        out.append("pass^t (pass@k runs): the unbiased probability that all of t samples succeed, "
                   "C(c, t)/C(n, t), over the tasks counted for pass@t.")
    leaking = sorted({r.feedback_mode for r in rep.runs if r.shows_grading_info})
    if leaking:
        out.append(f"{GRADING_MARK} feedback mode {', '.join(leaking)} shows grading information to the "
                   "actor: results are not comparable with blind modes.")
    clipped = sorted({r.benchmark for r in rep.runs if r.soft_score_clipped})
    if clipped:
        out.append(f"soft score of {', '.join(clipped)} runs: each attempt's score is kept unclipped "
                   "(negative points can take it below 0); the mean over tasks is clipped to [0, 1], "
                   "as that benchmark computes it.")
    if rep.rows:
        out.append("flips: +tasks only seq@K solved / −tasks only pass@K solved (tasks whose values "
                   "are 0/1); a seq@k run is paired with the pass@k run of its benchmark slice, actor "
                   "model, verifier and judge with k >= K (the same k first, else the largest), "
                   "whatever their feedback mode.")
    out.append("Intervals: 95%. metric@t: Wilson where no chain is censored before t (the estimate "
               "is then a plain proportion), else a task bootstrap that re-estimates the survival "
               "curve in every resample; pass@t: Chen et al.'s unbiased estimator over each task's "
               "valid samples. A paired difference of 0/1 outcomes with nothing censored (lift, "
               "seeded framing): the interval and p of one test, Tango's score test (Stat Med 1998) "
               "with Edwards' continuity correction, McNemar's corrected test at 0 "
               "(seqk.stats.paired_difference); any other (censored chains, Chen's fractional "
               f"pass@t, Δ, EGS, LGS): a task bootstrap ({rep.n_boot} resamples, seed {rep.seed}) "
               "whose p-value is read from the same resamples, so an interval excludes 0 exactly "
               "when p < 0.05. A bootstrap over fewer than 10 tasks, or over tasks that all look "
               "alike, gives no interval: 'too few tasks'. 'detects': the smallest lift the "
               "comparison's n detects with 80% power at 0.05 (the exact power `seqk plan` uses, "
               "the discordance at its upper 95% limit).")
    if any(c is not None and c.q_value is not None for r in rep.runs
           for c in (r.lift, r.framing, r.framing_chen)):
        out.append("q: Benjamini-Hochberg q-values (Benjamini & Hochberg 1995) across every p-value "
                   "of this report's table (lifts and framing effects): a comparison with q < 0.05 "
                   "is a finding at a 5% false discovery rate among them.")
    framings = sorted({r.framing_vs for r in rep.runs if r.framing_vs and r.framing})
    if framings:
        out.append("framing: seq@1 vs " + " or ".join(framings) + "; a pass@k run's sample 1 "
                   "is used when both runs sample with the same seed (only the framing differs).")
    if any(r.framing_chen for r in rep.runs):
        out.append("framing vs Chen: seq@1 vs Chen's pass@1 over all of a task's samples; one "
                   "sample's luck is not pass@1, so read both. Its interval resamples tasks: a "
                   "task's samples count once, as their mean.")
    shared = [r.run_id for r in rep.runs if r.shared_seeds]
    if shared:
        out.append(f"{', '.join(shared)}: seeded by seqk's old rule (every task sampled with seed + "
                   "attempt_index − 1), so a seed's luck is shared across tasks: they are not "
                   "independent and the intervals, which assume they are, are too narrow. A new run "
                   "(under a `tag:`) samples each task with its own seed.")
    return out


def _primary(rep: Any) -> list[str]:
    marked = [r for r in rep.runs if r.metric == "seq@k" and r.is_primary]
    if not marked:
        return []
    if len(marked) > 1:
        return [f"{len(marked)} runs are marked `primary: true` ({', '.join(r.run_id for r in marked)}): "
                "a study has one primary comparison; read every p here with its q-value."]
    r = marked[0]
    partner = r.pass_run_id or "no pass@k partner yet"
    return [f"primary comparison: {r.run_id} vs {partner} (its variant says `primary: true`): its lift's "
            "p-value is the confirmatory one; the other comparisons are exploratory, read with their "
            "q-values."]


def _errors(rep: Any) -> list[str]:
    n_err = sum(r.n_error_attempts for r in rep.runs)
    if not n_err:
        return []
    runs_with = sum(1 for r in rep.runs if r.n_error_attempts)
    how = ("counted as failures (a seq@k chain that stopped on one is unsolved through K)"
           if rep.errors_as_failures else
           "censor their chains (Kaplan-Meier over attempts: an errored attempt is neither a "
           "success nor a failure; --errors-as-failures counts them as failures)")
    return [f"{n_err} errored attempt(s) in {runs_with} run(s): {how}. Each figure of such a run "
            "carries its range, every errored attempt counted as a failure and as a success; a "
            "comparison whose compared slots are more than 1% errors prints that range beside p."]


def _pairing(rep: Any) -> list[str]:
    out = []
    for r in rep.runs:
        if r.metric != "seq@k":
            continue
        if r.pass_run_id is None:
            out.append(f"{r.run_id}: no pass@k run with the same slice, actor model, verifier and judge "
                       "and k >= K, so no lift.")
        elif r.n_pass_candidates > 1:
            out.append(f"{r.run_id}: compared with {r.pass_run_id}, chosen from {r.n_pass_candidates} "
                       "pass@k runs (the same k first, then the largest, the same feedback mode, the "
                       "same temperature, the run id).")
    return out


def _budget(rep: Any) -> list[str]:
    if not rep.equal_budget:
        return []
    partners = [p for p in PARTNERS if any(b.partner == p for b in rep.equal_budget)]
    return [
        "at equal budget: each seq@k run's width × depth frontier against a partner's, at the "
        "spends of both sides' frontier vertices: each side's best expected success at an expected "
        "spend per task of at most the budget, its best cell within it or, where better, two cells "
        "mixed across tasks (a+b) so that the expected spend is the budget (the upper concave "
        "envelope of its cells: a frontier continuous in the spends), on the tasks every candidate "
        f"cell of both runs has (n), both taken again in each of {rep.n_boot} paired task "
        f"resamples (seed {rep.seed}; a task's chains and samples together); pointwise 95% "
        "interval (its p in the JSON and CSV), and a simultaneous 95% band over the block's "
        "budgets (max-|t|, Romano & Wolf 2005): seq@k is better only "
        "where the band excludes 0. Partners, stopping-matched first: "
        + "; ".join({"none_feedback": "a seq@k run with feedback_mode none",
                     "resample_until_success": "resample until success from the pass@k run's "
                     "samples (w chains each stopping at its first success; Chen's identity)",
                     "pass_at_m": "pass@m, which does not stop and pays for every sample "
                     "(not spend-matched: it favours seq@k, kept to show it)"}[p] for p in partners)
        + ". Expected spend: seq@k, sum over attempts j <= d of S(j − 1) × the mean spend of "
        "attempt j over the chains with a valid attempt j (errors censoring); resample until "
        "success, w × s × sum_{j<d} C(n − c, j)/C(n, j) with s a task's mean spend per valid "
        "sample (a sample's spend assumed not to depend on its success). US$ only when every call "
        "of both runs was priced and both cost something, else tokens."]
