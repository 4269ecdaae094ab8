"""A synthetic CL-bench world with a known truth, offline, for docs/compare.md and its tests: 60
FAKE tasks (`demo.jsonl`: each asks for the code word of one ledger, which the context names) and
stand-in models, `mock/py:benchmarks.clbench.demo:<name>`. Nothing here measures a real model.

- `cheap` and `strong`, the actors: right with a probability set by the task's difficulty (the
  ledger number mod 5), the strong one 0.3 more often; each call draws its own coin from its seed
  (seqk gives every (task, chain, attempt) its own seed), so retries and samples differ.
- `critic_sharp`, `critic_vague`, `critic_half`: socratic critics. A sharp critic asks the question
  that helps (a cheap actor that reads it is right 3 times in 4 on its next attempt); a vague one
  asks nothing useful; `critic_half` is sharp on half the ledgers, vague on the others.
- `judge`: checks the reply names the rubric's code word; it grades and it stops the chains.

So, in truth: the sharp critic beats the vague one, socratic feedback from it beats binary
feedback, and the strong model answers once better than the cheap one does, at ~10 times its
price per attempt. `python -m benchmarks.clbench.demo > benchmarks/clbench/demo.jsonl` writes the
data again.
"""

from __future__ import annotations

import hashlib
import json
import re

N_TASKS = 60
DIFFICULTY = (0.1, 0.2, 0.3, 0.45, 0.6)
"""The cheap actor's chance of being right without help, by ledger number mod 5."""
STRONG_BONUS = 0.3
HELPED = 0.75
"""The cheap actor's chance of being right after a sharp critic's question."""
SHARP = "Which message of the conversation names the code word of this ledger, and did your answer copy it exactly?"
VAGUE = "Re-read the task and check every part of your answer against it."
_SYLLABLES = ("ka", "lo", "mi", "ru", "te", "va", "zo", "ne")
_LEDGER = re.compile(r"code word of ledger (\d+)\?")
_RUBRIC_WORD = re.compile(r"code word of ledger \d+: (\w+)\.")


def word(ledger: int) -> str:
    """Ledger n's code word (60 distinct ones, none a palindrome)."""
    return _SYLLABLES[ledger % 8] + _SYLLABLES[(ledger // 8) % 8] + "n"


def records() -> list[dict[str, object]]:
    """The data file's records, in CL-bench's schema."""
    return [{"messages": [
        {"role": "system", "content": "You keep the ledgers of the imaginary Kingdom of Qel."},
        {"role": "user", "content": f"FAKE CONTEXT: in the archive of Qel, ledger {i}'s code word is {word(i)}. "
                                    f"QUESTION: what is the code word of ledger {i}?"}],
        "rubrics": [f"The response names the code word of ledger {i}: {word(i)}."],
        "metadata": {"task_id": f"demo-ledger-{i:02d}", "context_category": "Domain Knowledge Reasoning",
                     "sub_category": "Ledgers (synthetic)"}} for i in range(1, N_TASKS + 1)]


def coin(*parts: object) -> float:
    """A uniform draw in [0, 1) that depends only on its parts."""
    digest = hashlib.sha256("/".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _reply(prompt: str, seed: int | None, name: str, chance: float, helped: float) -> str:
    ledger = int(_LEDGER.search(prompt).group(1))  # type: ignore[union-attr]
    right = word(ledger)
    p = helped if SHARP in prompt else chance
    said = right if coin(name, ledger, seed) < p else right[::-1]
    return f"The code word of ledger {ledger} is {said}."


def cheap(prompt: str, seed: int | None = None) -> str:
    """The cheap actor."""
    ledger = int(_LEDGER.search(prompt).group(1))  # type: ignore[union-attr]
    return _reply(prompt, seed, "cheap", DIFFICULTY[ledger % 5], HELPED)


def strong(prompt: str, seed: int | None = None) -> str:
    """The strong actor: 0.3 more likely to be right, and it says how it checked."""
    ledger = int(_LEDGER.search(prompt).group(1))  # type: ignore[union-attr]
    chance = min(0.95, DIFFICULTY[ledger % 5] + STRONG_BONUS)
    return (_reply(prompt, seed, "strong", chance, max(chance, HELPED))
            + " I read every message of the conversation for that ledger before answering.")


def judge(prompt: str) -> str:
    """CL-bench's judge contract: Overall Score 1 when the reply names the rubric's code word."""
    expected = _RUBRIC_WORD.search(prompt).group(1)  # type: ignore[union-attr]
    response = prompt.split("Student's response:", 1)[1].split("Output only a JSON object", 1)[0]
    ok = re.search(rf"\b{expected}\b", response) is not None
    return json.dumps({"Grading Rationale": "compared the code word with the rubric's",
                       "List of Requirement Satisfaction Status": ["yes" if ok else "no"],
                       "Overall Score": int(ok)})


def critic_sharp(prompt: str) -> str:
    """Asks the question that helps."""
    return SHARP


def critic_vague(prompt: str) -> str:
    """Asks nothing useful."""
    return VAGUE


def critic_half(prompt: str) -> str:
    """Sharp on the even ledgers of the rubric, vague on the odd ones."""
    ledger = int(re.search(r"code word of ledger (\d+):", prompt).group(1))  # type: ignore[union-attr]
    return SHARP if ledger % 2 == 0 else VAGUE


if __name__ == "__main__":
    for record in records():
        print(json.dumps(record))
