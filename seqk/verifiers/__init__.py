"""Verifiers: small functions that grade a reply and return a seqk.benchmark.Verdict, so a
deterministic benchmark is a task list and one line of grading. Each takes the reply and the
target (one right answer, or a list of them: any passes):

    exact       the reply, normalised (case, punctuation, articles, whitespace), is a target
    includes    a target appears in the reply
    match       a target at the reply's end (begin, any, exact), as text or as a number
    regex       a capture group of a pattern's first match is a target
    answer      what follows the last ANSWER: (a letter, a word, the line) is a target
    numeric     the number the reply states (its ANSWER: line, else after "=", else its last
                number outside the seq@k framing) is a target, within a tolerance
    choice      the letter(s) after ANSWER:, else the last lone letter, are the target's
    json_field  a field of the reply's JSON object equals a target
    f1          token F1 with the best target, passing at a threshold
    json_grid   the reply's last JSON grid equals the expected grid (score: cells matched)
    llm_rubric  the judge model rules on each criterion of a rubric (async)

A verdict's `details["answer"]` is what was read from the reply; `details["format"]` says why
nothing could be read ("no ANSWER: line"), which the `format` feedback mode passes on. Its
`raw_eval_output` names the expected answer: a feedback mode that shows it declares the leak.

exact, f1, includes, match, regex, answer and choice follow inspect_ai's scorers of the same
names rule for rule (0.3.285), so `benchmark: inspect` grades as inspect does. `Scorer` and
`score` choose a verifier by name, as a variant's `scorer:` does.
"""

from seqk.verifiers.base import Target, format_problem, targets_of
from seqk.verifiers.grids import GridGrade, cell_accuracy, grade_grid, is_grid, json_grid
from seqk.verifiers.jsonextract import extract_all_json, extract_json
from seqk.verifiers.judging import RUBRIC_PROMPT, judge_each, judge_json, llm_rubric
from seqk.verifiers.numbers import last_number_in, numeric, stated_number
from seqk.verifiers.patterns import ANSWER_PATTERNS, answer, choice, choice_prompt, regex
from seqk.verifiers.scorers import SCORERS, Reference, Scorer, load_function, score, verifier_name
from seqk.verifiers.structured import json_field
from seqk.verifiers.text import exact, f1, includes, match, normalize

__all__ = [
    "ANSWER_PATTERNS", "RUBRIC_PROMPT", "SCORERS", "GridGrade", "Reference", "Scorer", "Target", "answer",
    "cell_accuracy", "choice", "choice_prompt", "exact", "extract_all_json", "extract_json", "f1",
    "format_problem", "grade_grid", "includes", "is_grid", "json_field", "json_grid", "judge_each",
    "judge_json", "last_number_in", "llm_rubric", "load_function", "match", "normalize", "numeric",
    "regex", "score", "stated_number", "targets_of", "verifier_name",
]
