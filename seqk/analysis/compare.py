"""`seqk compare A B`: any two runs of one benchmark slice, side by side, on the tasks both hold.

What a reader needs, in the order they need it:

- what differs between the two runs' settings (model, critic, feedback mode, prompt version,
  judge, temperature, k, chains, options, prices), from each run's stored identity
  (runs.fingerprint_fields) and settings (runs.config), so it is clear what is being compared;
- the paired difference a − b at each t up to the smaller K, with its interval, p-value and
  number of tasks (`metrics.compare_on`, the procedure of the report's lift: Tango's score
  interval and test for 0/1 outcomes, a paired task bootstrap for fractional ones such as a
  pass@k run's Chen estimate or the mean over a task's chains);
- at equal budget: each run's frontier matched at equal spend per task, with the paired task
  bootstrap, the simultaneous band and the cross-over (seqk/analysis/compare_budget.py);
- the tasks that flip: solved by one run only, where a task counts as solved by a run when any of
  its attempts succeeded (any chain, any sample), each with the attempt at which it was solved.

Runs of different benchmarks or slices are refused (BadInput, one line): their tasks are not the
same tasks.
"""

from __future__ import annotations

import functools
import json
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from seqk import store
from seqk.analysis import compare_budget, inputs, metrics
from seqk.analysis.compare_budget import BudgetComparison
from seqk.analysis.metrics import Comparison, RunMetrics
from seqk.analysis.paired import compare_read
from seqk.errors import BadInput
from seqk.stats import DEFAULT_N_BOOT, DEFAULT_SEED

FIRST_KEYS = ("metric", "k", "chains", "actor.model", "feedback_mode", "critic.model", "judge.model",
              "verifier", "prompt_version", "benchmark_prompt_version", "tag")
"""The settings a reader looks for first; every other setting that differs follows, by name."""

COMPARE_THREADS = min(4, os.cpu_count() or 1)
"""Threads that compute the paired comparisons at each t and the equal budget."""

_PASS_UNUSED = ("feedback_mode", "critic.")
"""Settings a pass@k run stores but never uses (it shows no feedback and asks no critic)."""


@dataclass(frozen=True)
class Flip:
    """A task solved by one run only."""

    task_index: int
    task_id: str
    solved_by: str
    """'a' or 'b'."""
    attempt_index: int
    """The first attempt (seq@k) or sample (pass@k) at which the solving run succeeded."""
    chain_index: int
    """The chain of that success (1 but for a seq@k run with `chains:`)."""


@dataclass(frozen=True)
class Flips:
    """How the tasks both runs hold split by who solved them (any attempt, any chain, any sample)."""

    a_only: list[Flip]
    b_only: list[Flip]
    n_both: int
    n_neither: int
    """Tasks neither solved, both outcomes known."""
    n_unsettled: int
    """Tasks not solved by one run whose outcome in the other is not known yet (an errored attempt
    left out, or attempts still to run): not counted as flips."""


@dataclass(frozen=True)
class Side:
    """One of the two runs: its figures (curve, spend, errors) and how many chains it asks for."""

    run: RunMetrics
    chains: int


@dataclass
class RunComparison:
    """Run a against run b (`seqk compare`); every difference is a − b."""

    a: Side
    b: Side
    differs: dict[str, tuple[Any, Any]]
    """Setting -> (a's value, b's value), for each setting that differs, most telling first."""
    n_shared: int
    """Tasks both runs hold (same index, same content)."""
    at_t: list[Comparison]
    """a − b at t = 1 .. the smaller K, each on the tasks both count at t."""
    flips: Flips
    errors_as_failures: bool
    seed: int
    n_boot: int
    equal_budget: BudgetComparison = field(default_factory=lambda: BudgetComparison(None))
    """Both frontiers at equal spend per task, or why not."""
    notes: list[str] = field(default_factory=list)


def compare(run_a: str, run_b: str, db: store.DbLike = None, *, errors_as_failures: bool = False,
            seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_N_BOOT) -> RunComparison:
    """Compare two runs (exact ids, globs or prefixes naming one run each) on their shared tasks."""
    # the estimates without SQL run on threads while the connection reads the rest: each figure draws
    # from its own seeded stream, so which thread computes it, and when, changes nothing
    with store.connect(db, read_only=True) as con, ThreadPoolExecutor(COMPARE_THREADS) as pool:
        a_id, b_id = (store.resolve_run_id(con, pattern) for pattern in (run_a, run_b))
        if a_id == b_id:
            raise BadInput(f"{run_a!r} and {run_b!r} name the same run, {a_id}; compare two runs")
        rows = [store.get_run(con, i) or {} for i in (a_id, b_id)]
        for key in ("benchmark", "slice"):
            if rows[0][key] != rows[1][key]:
                raise BadInput(f"{a_id} is a run of {key} {rows[0][key]}, {b_id} of {rows[1][key]}: runs of "
                               f"different {key}s are not compared (their tasks are not the same tasks)")
        # both runs' rows read once, for the curves, each t's paired comparison and the equal budget
        # each run's rows read back from the cache folder while it has not changed (seqk.analysis.inputs)
        pair = sorted({a_id, b_id})
        keys = functools.cache(lambda: inputs.run_keys(con, pair)[0])
        chains = inputs.chains_of(con, pair, keys)
        spend_rows = inputs.spend_of(con, pair, keys)
        pending = pool.submit(compare_budget.equal_budget, a_id, b_id, spend_rows, chains,
                              errors_as_failures=errors_as_failures, seed=seed, n_boot=n_boot)
        at_t = [pool.submit(compare_read, a_id, b_id, t, chains, errors_as_failures=errors_as_failures, seed=seed,
                            n_boot=n_boot) for t in range(1, min(r["k"] for r in rows) + 1)]
        found = {r.run_id: r for r in metrics.compute(con, [a_id, b_id], errors_as_failures=errors_as_failures,
                                                     seed=seed, n_boot=n_boot, chains=chains, spend_rows=spend_rows,
                                                     curve_rows=inputs.curves_of(
                                                         con, pair, keys, errors_as_failures=errors_as_failures),
                                                     paired=False)}
        solved = inputs.solved_of(con, a_id, b_id, keys, errors_as_failures=errors_as_failures)
        budget = pending.result()
        compared = [x.result() for x in at_t]
    result = RunComparison(Side(found[a_id], int(rows[0]["chains"])), Side(found[b_id], int(rows[1]["chains"])),
                           differs(rows[0], rows[1]), len(solved), compared, flips_of(solved),
                           errors_as_failures, seed, n_boot, budget)
    result.notes = _notes(result)
    return result


def settings(row: dict[str, Any]) -> dict[str, Any]:
    """A run's settings as flat dotted names (actor.model, options.split, critic.price, …): its
    identity (fingerprint_fields), k, chains, verifier, tag and each role's price. What a run stores
    but never uses reads None: a pass@k run's feedback mode and critic, a role without a model."""
    identity = _json(row.get("fingerprint_fields"))
    config = _json(row.get("config"))
    # the runs table's own columns first: an imported or synthetic run may have no full identity
    flat: dict[str, Any] = {"metric": row.get("metric"), "k": row.get("k"), "chains": row.get("chains"),
                            "actor.model": row.get("actor_model"), "feedback_mode": row.get("feedback_mode"),
                            "critic.model": row.get("critic_model"), "judge.model": row.get("judge_model"),
                            "verifier": row.get("verifier"), "actor.temperature": row.get("temperature"),
                            "tag": row["run_id"].rsplit("/", 1)[-1].partition("@")[2] or None}
    for key, value in identity.items():
        if key in ("benchmark", "slice"):
            continue
        if isinstance(value, dict):
            flat |= {f"{key}.{name}": inner for name, inner in value.items()}
        else:
            flat[key] = value
    for role in ("actor", "judge", "critic"):
        role_config = config.get(role)
        if isinstance(role_config, dict):
            flat[f"{role}.price"] = role_config.get("price")
    if row.get("metric") == "pass@k":
        flat = {key: None if key.startswith(_PASS_UNUSED) else value for key, value in flat.items()}
    # a role without a model (a template feedback mode's critic, a deterministic verifier's judge)
    # has no settings worth comparing
    unused = tuple(f"{role}." for role in ("judge", "critic") if flat.get(f"{role}.model") is None)
    return {key: None if unused and key.startswith(unused) else value for key, value in flat.items()}


def differs(a: dict[str, Any], b: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """The settings whose values differ between two run rows: FIRST_KEYS first, then by name."""
    sa, sb = settings(a), settings(b)
    for role in ("judge", "critic"):
        if (sa.get(f"{role}.model") is None) != (sb.get(f"{role}.model") is None):
            # one run has no such role: its model (and price) say it; its other settings are noise
            for key in [k for k in set(sa) | set(sb) if k.startswith(f"{role}.")]:
                if key not in (f"{role}.model", f"{role}.price"):
                    sa.pop(key, None)
                    sb.pop(key, None)
    keys = [k for k in FIRST_KEYS if k in sa or k in sb]
    keys += sorted((set(sa) | set(sb)) - set(keys))
    return {k: (sa.get(k), sb.get(k)) for k in keys if sa.get(k) != sb.get(k)}


def _json(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        value = json.loads(value)
    return value if isinstance(value, dict) else {}


def flips_of(rows: list[dict[str, Any]]) -> Flips:
    """Flips from compare_solved's rows (one per shared task)."""
    a_only: list[Flip] = []
    b_only: list[Flip] = []
    both = neither = unsettled = 0
    for r in rows:
        a, b = r["a_solved_at"] is not None, r["b_solved_at"] is not None
        if a and b:
            both += 1
        elif a or b:
            side = "a" if a else "b"
            if not r[f"{'b' if a else 'a'}_settled"]:
                unsettled += 1
                continue
            flip = Flip(r["task_index"], r["task_id"], side, int(r[f"{side}_solved_at"]),
                        int(r[f"{side}_solved_chain"]))
            (a_only if a else b_only).append(flip)
        elif r["a_settled"] and r["b_settled"]:
            neither += 1
        else:
            unsettled += 1
    return Flips(a_only, b_only, both, neither, unsettled)


def _notes(c: RunComparison) -> list[str]:
    a, b = c.a.run, c.b.run
    notes = []
    if any(x.difference.value is not None and x.interval == "bootstrap" for x in c.at_t):
        notes.append("Where a value is fractional (a pass@k run's Chen estimate over its samples, a mean "
                     "over a task's chains, a chain censored by an error) the interval is a paired task "
                     f"bootstrap ({c.n_boot} resamples, seed {c.seed}) and p is read from the same "
                     "resamples: the interval excludes 0 exactly when p < 0.05.")
    if any(x.p_value is not None and x.interval == "score" for x in c.at_t):
        notes.append("Where both values are 0/1, the interval and p come from one test (Tango's score test "
                     "with a continuity correction; McNemar's at 0): the interval excludes 0 exactly when "
                     "p < 0.05.")
    if c.at_t and c.at_t[-1].t < max(a.k, b.k):
        notes.append(f"Compared up to t = {c.at_t[-1].t}, the smaller K; the other run's later attempts count "
                     "only in its own curve and in the flips.")
    if (c.a.chains, a.k) != (c.b.chains, b.k):
        notes.append("The flips count any attempt of any chain or sample: a run with more chains or a larger K has "
                     "had more chances to solve a task.")
    oracle = [r.run_id for r in (a, b) if r.metric == "seq@k" and r.verifier == "llm"]
    if oracle:
        notes.append(f"{', '.join(oracle)}: its chains stop on the verdict of the LLM judge that also grades them, "
                     "so part of a seq@k gain may be an oracle effect (Huang et al., ICLR 2024).")
    if c.n_shared == 0:
        notes.append("The runs share no task (same index and same content): nothing is compared.")
    errored = [r.run_id for r in (a, b) if r.n_error_attempts]
    if errored:
        how = ("counted as failures" if c.errors_as_failures else
               "left out where they hide the outcome (--errors-as-failures counts them as failures)")
        notes.append(f"Errored attempts in {', '.join(errored)}: {how}.")
    if c.flips.n_unsettled:
        notes.append(f"{c.flips.n_unsettled} shared task(s) not counted as flips or as unsolved: one run's "
                     "outcome is not known yet (errored or unfinished attempts).")
    if "judge.model" in c.differs or "verifier" in c.differs:
        notes.append("The runs are graded by different judges: success does not mean the same thing in both.")
    leaking = [r.run_id for r in (a, b) if r.shows_grading_info and r.metric == "seq@k"]
    if leaking:
        notes.append(f"{', '.join(leaking)}: its feedback mode shows the actor grading information, so it is "
                     "not comparable with a blind mode.")
    shared = [r.run_id for r in (a, b) if r.shared_seeds]
    if shared:
        notes.append(f"{', '.join(shared)}: seeded by seqk's old rule (a seed's luck shared across tasks), so "
                     "the intervals, which assume independent tasks, are too narrow.")
    return notes


def to_json(c: RunComparison, *, db: str | None = None) -> str:
    """`seqk compare --format json`: the issue's interface (a, b, differs, n_shared, at_t,
    equal_budget, flips),
    plus each run's summary, every flip with its attempt and `seqk inspect` command, and the notes."""
    def run(side: Side) -> dict[str, Any]:
        r = side.run
        return {"run_id": r.run_id, "metric": r.metric, "k": r.k, "chains": side.chains,
                "actor_model": r.actor_model, "feedback_mode": r.feedback_mode, "critic_model": r.critic_model,
                "judge_model": r.judge_model, "verifier": r.verifier, "n_started": r.n_started,
                "n_error_attempts": r.n_error_attempts,
                "cost_usd": r.spend.cost_usd if r.spend else None,
                "n_unpriced_calls": r.spend.n_unpriced_calls if r.spend else 0,
                "curve": [{"t": p.t, "value": p.value, "low": p.low, "high": p.high, "n_tasks": p.n_tasks,
                           "cost_usd_per_task": p.cost_usd_per_task, "tokens_per_task": p.tokens_per_task}
                          for p in r.curve]}

    body = {
        "a": c.a.run.run_id, "b": c.b.run.run_id,
        "differs": {key: list(values) for key, values in c.differs.items()},
        "n_shared": c.n_shared,
        "at_t": [{"t": x.t, "a": x.a_value, "b": x.b_value,
                  "difference": {"value": x.difference.value, "low": x.difference.low,
                                 "high": x.difference.high},
                  "p_value": x.p_value, "n": x.difference.n, "interval": x.interval} for x in c.at_t],
        "equal_budget": compare_budget.to_dict(c.equal_budget),
        "flips": {"a_only": [f.task_index for f in c.flips.a_only],
                  "b_only": [f.task_index for f in c.flips.b_only]},
        "flipped": [{"task_index": f.task_index, "task_id": f.task_id, "solved_by": f.solved_by,
                     "attempt_index": f.attempt_index, "chain_index": f.chain_index,
                     "inspect": inspect_command(c.a.run.run_id if f.solved_by == "a" else c.b.run.run_id,
                                                f.task_index, db),
                     "view": view_path(c.a.run.run_id, c.b.run.run_id, f.task_index)}
                    for f in c.flips.a_only + c.flips.b_only],
        "n_both": c.flips.n_both, "n_neither": c.flips.n_neither, "n_unsettled": c.flips.n_unsettled,
        "runs": {"a": run(c.a), "b": run(c.b)},
        "errors_as_failures": c.errors_as_failures, "seed": c.seed, "n_boot": c.n_boot, "notes": c.notes,
    }
    return json.dumps(body, indent=2, default=str)


def inspect_command(run_id: str, task_index: int, db: str | None = None) -> str:
    """The `seqk inspect` command line that prints the task's whole story, quoted for a shell."""
    import shlex

    where = f" --db {shlex.quote(db)}" if db else ""
    return f"seqk inspect {shlex.quote(run_id)} --task-index {task_index}{where}"


def view_path(run_a: str, run_b: str, task_index: int | None = None) -> str:
    """The path of the two runs' compare page in `seqk view` (with a task: the two stories side by
    side): each run id one percent-encoded segment, `/` included."""
    from urllib.parse import quote

    path = f"/compare/{quote(run_a, safe='')}/{quote(run_b, safe='')}"
    return path if task_index is None else f"{path}/tasks/{task_index}"
