"""The seq@k prompt, word for word."""

from seqk.benchmark import HistoryItem
from seqk.benchmark.prompt import actor_prompt


def test_pass_at_k_prompt_is_the_bare_task():
    assert actor_prompt("Solve x.", 2, 5, seq=False) == "Solve x."


def test_first_seq_attempt_carries_the_note():
    assert actor_prompt("Solve x.", 1, 5, seq=True) == (
        "Solve x.\n\nThis is attempt 1 of 5. If this attempt does not pass, you will receive "
        "feedback and can revise it on the remaining attempts.")


def test_later_attempts_number_every_previous_attempt_and_feedback():
    history = [HistoryItem(1, "a1", "f1"), HistoryItem(2, "a2", None), HistoryItem(3, "a3", "")]
    assert actor_prompt("Solve x.", 4, 5, seq=True, history=history) == (
        "Solve x.\n\n"
        "This is attempt 4 of 5. Review your previous attempt(s) and the feedback below, "
        "then provide an improved answer.\n\n"
        "<PreviousAttempt 1>\na1\n</PreviousAttempt 1>\n\n"
        "<Feedback 1>\nf1\n</Feedback 1>\n\n"
        "<PreviousAttempt 2>\na2\n</PreviousAttempt 2>\n\n"
        "<PreviousAttempt 3>\na3\n</PreviousAttempt 3>")
