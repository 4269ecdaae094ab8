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


# --- the retry protocol as a variant sets it ---------------------------------------------------

from seqk.benchmark.prompt import DEFAULT, RetryProtocol, default_protocol, template_problem  # noqa: E402
from seqk.records import Chat, Message  # noqa: E402

HISTORY = [HistoryItem(1, "a1", "f1"), HistoryItem(2, "a2", None)]


def test_the_default_protocol_is_the_seeds_and_marks_the_task_for_the_cache():
    rendered = DEFAULT.render("Solve x.", 3, 5, seq=True, history=HISTORY)
    assert rendered.prompt == actor_prompt("Solve x.", 3, 5, seq=True, history=HISTORY)
    assert rendered.cache_prefix == "Solve x."
    assert DEFAULT.render("Solve x.", 2, 5, seq=False).cache_prefix == "Solve x."
    assert DEFAULT.identity() == {} and not DEFAULT.chat


def test_a_custom_framing_keeps_the_task_as_the_cached_prefix():
    custom = RetryProtocol(framing_first="", framing_later="Try {t}/{k}; it is not right yet.",
                           attempt="[{i}] {output}", feedback="[{i}] said: {feedback}")
    first = custom.render("Solve x.", 1, 3, seq=True)
    assert first.prompt == "Solve x." and first.cache_prefix == "Solve x."
    later = custom.render("Solve x.", 3, 3, seq=True, history=HISTORY)
    assert later.prompt == ("Solve x.\n\nTry 3/3; it is not right yet.\n\n[1] a1\n\n[1] said: f1\n\n[2] a2")
    assert later.cache_prefix == "Solve x."
    assert set(custom.identity()) == {"framing_first", "framing_later", "attempt", "feedback"}


def test_history_as_messages_is_the_conversation_each_attempt_extends():
    chat = RetryProtocol(system="Be brief.", history="messages")
    first = chat.render("Solve x.", 1, 3, seq=True).prompt
    third = chat.render("Solve x.", 3, 3, seq=True, history=HISTORY).prompt
    assert isinstance(first, Chat) and isinstance(third, Chat)
    note = ("This is attempt 1 of 3. If this attempt does not pass, you will receive feedback and can revise it "
            "on the remaining attempts.")
    assert first.messages == (Message("system", "Be brief."), Message("user", f"Solve x.\n\n{note}"))
    assert third.messages[:2] == first.messages
    assert [m.role for m in third.messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert third.messages[2].content == "a1" and third.messages[4].content == "a2"
    retry = ("Review your previous attempt(s) and the feedback below, then provide an improved answer.")
    assert third.messages[3].content == f"This is attempt 2 of 3. {retry}\n\n<Feedback 1>\nf1\n</Feedback 1>"
    assert third.messages[5].content == f"This is attempt 3 of 3. {retry}"  # attempt 2 had no feedback
    # the next attempt repeats all of it: the cache point is the end of the last message
    assert third.cache_at == (5, len(third.messages[5].content))
    assert first.cache_at == (1, len("Solve x."))  # a system message, then the task
    stored = third.stored()
    assert stored.startswith('[{"role": "system", "content": "Be brief."}')


def test_under_feedback_mode_none_every_attempt_sees_the_task_and_its_framing_only():
    none = default_protocol(shows_history=False)
    assert none.render("Solve x.", 3, 3, seq=True, history=HISTORY).prompt == "Solve x.\n\nThis is attempt 3 of 3."
    bare = RetryProtocol(framing_first="", shows_history=False)
    assert bare.render("Solve x.", 2, 3, seq=True, history=HISTORY).prompt == "Solve x."
    assert bare.identity() == {"framing_first": ""}  # framing_later, history... are not used
    assert none.identity() == {}


def test_templates_are_checked_for_their_placeholders():
    assert template_problem("Attempt {t} of {k}", "framing_first") is None
    assert "unknown placeholder {output}" in template_problem("{output}", "framing_later")
    assert "unknown placeholder {n}" in template_problem("attempt {n}", "framing_first")
    assert template_problem("{i}: {output} / {feedback}", "attempt") is None
    assert "brace" in template_problem("a { b", "feedback")
    assert "unknown placeholder {output.upper}" in template_problem("{output.upper}", "attempt")
    assert "cannot be filled in" in template_problem("{t:s}", "framing_first")
    assert template_problem("a literal {{brace}}", "framing_first") is None
