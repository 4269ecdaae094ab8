"""The rubric machinery shared by the four rubric benchmarks: chat rendering, rubric lists,
reading a judge's JSON, concurrent per-criterion calls, weighted scores, and where the data
comes from (a local file, or the pinned hub revision; offline, a message naming data_path)."""

from __future__ import annotations

import re
import sys

import pytest
from rubrichelp import FIXTURES, GatedRole, ScriptedRole, run

from benchmarks._common.rubric import (
    Criterion,
    Grade,
    Message,
    clip_words,
    content_text,
    messages_of,
    nonempty,
    numbered,
    render_chat,
    weighted_score,
)
from benchmarks._common.rubric_data import DataOptions, HubFile, data_file
from benchmarks.healthbench import benchmark as healthbench
from seqk.errors import ConfigError, JudgeError
from seqk.verifiers import judge_each, judge_json

CHAT = [Message("system", "Be brief."), Message("user", " Hi "), Message("assistant", ""),
        Message("", "no role")]


def test_content_coercion():
    assert content_text(None) == ""
    assert content_text([{"type": "text", "text": "a "}, "b", 3]) == "a b"
    assert content_text({"x": 1}) == "{'x': 1}"
    assert content_text({"x": 1}, other="json") == '{"x": 1}'
    assert messages_of([{"role": "USER", "content": "q"}, "junk", {"content": "r"}]) == [
        Message("user", "q"), Message("user", "r")]


def test_the_four_chat_renderings():
    assert render_chat(CHAT, "indexed") == (
        "[00] system:\n\nBe brief.\n\n[01] user:\n\nHi\n\n[02] assistant:\n\n\n\n[03] :\n\nno role")
    assert render_chat(CHAT, "transcript") == "SYSTEM:\nBe brief.\n\nUSER:\n Hi \n\n:\nno role"
    assert render_chat(CHAT, "labelled") == "System: Be brief.\n\nUser:  Hi \n\nMessage: no role"
    assert render_chat(CHAT, "grader") == "system: Be brief.\n\nuser:  Hi \n\nmessage: no role"


def test_rubric_list_drops_empty_items_before_numbering():
    items = nonempty(["first", "", "  ", None, " second "])
    assert numbered(items) == "1. first\n2. second"


def has_verdict(o):
    return "verdict" in o


@pytest.mark.parametrize("reply", [
    '```json\n{"verdict": "yes"}\n```\nLater prose: {"verdict": "no"} is wrong.',  # fenced wins
    'Thinking about $\\frac{a}{b}$ and {x}.\n```json\n{"verdict": "yes"}',  # unterminated fence
    'Using $\\{a, b\\}$ sets: {"verdict": "no"} then {"verdict": "yes"} and {braces}',  # last balanced
    "```\n{'verdict': 'yes',}\n```",  # plain fence, repaired quotes and comma
])
def test_judge_json_takes_the_last_fenced_or_balanced_object(reply):
    assert judge_json(reply, has_verdict, "verdict")["verdict"] == "yes"


def test_judge_json_prose_braces_in_strings_do_not_break_the_scan():
    reply = 'The set {1, 2}. {"verdict": "yes", "why": "uses } and { in text"} Done {x}.'
    assert judge_json(reply, has_verdict, "verdict")["why"] == "uses } and { in text"


def test_judge_json_without_an_accepted_object_is_a_judge_error():
    with pytest.raises(JudgeError, match="no verdict object in the judge's reply: 'I think it is fine.'"):
        judge_json("I think it is fine.", has_verdict, "verdict object")
    with pytest.raises(JudgeError):
        judge_json('{"other": 1}', has_verdict, "verdict object")


def test_judge_each_has_every_call_in_flight_at_once_and_keeps_order():
    judge = GatedRole(lambda p: p.upper(), expected=12)
    results = run(judge_each(judge, [f"item {i}" for i in range(12)], lambda r: r))
    assert judge.most_in_flight == 12
    assert results == [f"ITEM {i}" for i in range(12)]


def test_judge_each_finishes_every_call_then_raises_the_first_failure():
    def read(reply):
        if reply == "bad":
            raise JudgeError("unreadable")
        return reply

    judge = ScriptedRole(["ok", "bad", "ok", "bad"])
    with pytest.raises(JudgeError, match="rubric item 2 of 4: unreadable"):
        run(judge_each(judge, ["a", "b", "c", "d"], read))
    assert len(judge.prompts) == 4  # every call made (and paid for) is kept with the attempt


def test_weighted_score_counts_negative_weights_and_clips_on_request():
    grades = [Grade(Criterion("a", 5), 1.0), Grade(Criterion("b", 2), 0.0), Grade(Criterion("c", -4), 1.0)]
    assert weighted_score(grades, clip=False) == pytest.approx(1 / 7)
    only_penalty = [Grade(Criterion("a", 2), 0.0), Grade(Criterion("c", -4), 1.0)]
    assert weighted_score(only_penalty, clip=False) == -2.0
    assert weighted_score(only_penalty, clip=True) == 0.0
    assert weighted_score([Grade(Criterion("z", -1), 1.0)], clip=False) == 0.0


def test_clip_words_cuts_at_a_word():
    assert clip_words("alpha beta gamma", 12) == "alpha beta…"
    assert clip_words("short", 12) == "short"


# --- where the data comes from ------------------------------------------------------


HUB = HubFile("openai/healthbench", "hard_2025-05-08-21-00-10.jsonl", "c" * 40)


def test_a_missing_local_file_is_an_option_error_naming_data_path(tmp_path):
    with pytest.raises(ConfigError, match=r"options\.data_path: no file at .*nowhere\.jsonl"):
        data_file(DataOptions(data_path=str(tmp_path / "nowhere.jsonl")), HUB)


def test_offline_hub_fails_at_validation_naming_data_path(tmp_path, monkeypatch):
    import huggingface_hub.constants
    import huggingface_hub.file_download  # noqa: F401 - imported before the clock starts

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    with pytest.raises(ConfigError) as info:
        healthbench.load_tasks(healthbench.Options())
    message = str(info.value)
    assert "options.data_path" in message and "openai/healthbench" in message
    assert "set data_path to the local file" in message


def closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_hub_fails_at_once_in_one_line_naming_data_path(tmp_path, monkeypatch):
    import time

    import huggingface_hub.constants
    import huggingface_hub.file_download  # noqa: F401 - imported before the clock starts

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    start = time.monotonic()
    with pytest.raises(ConfigError) as info:
        healthbench.load_tasks(healthbench.Options())
    # huggingface_hub alone retries with backoff for about 24 s before giving up; seqk asks once
    # and fails at once (the bound leaves room for a loaded machine).
    assert time.monotonic() - start < 15
    [issue] = info.value.issues
    message = str(issue)
    assert "\n" not in message
    assert "options.data_path" in message and "the hub cannot be reached (127.0.0.1:" in message
    assert "set data_path to the local file" in message


def test_an_unreachable_hub_still_serves_a_file_from_its_cache(monkeypatch):
    import huggingface_hub
    import huggingface_hub.constants
    import huggingface_hub.file_download  # noqa: F401 - imported before the clock starts

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", f"http://127.0.0.1:{closed_port()}")

    def cached_only(**kwargs):
        assert kwargs["local_files_only"], "went to the network although the hub is unreachable"
        return str(FIXTURES / "healthbench.jsonl")

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", cached_only)
    assert len(healthbench.load_tasks(healthbench.Options())) == 2


def test_without_huggingface_hub_the_message_names_the_extra_and_data_path(monkeypatch):
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    with pytest.raises(ConfigError, match=r"pip install 'seqk\[hub\]', or download the file and set data_path"):
        data_file(DataOptions(), HUB)


def test_the_hub_download_is_pinned_and_goes_through_the_hub_cache(monkeypatch):
    import huggingface_hub

    asked = {}

    def fake_download(**kwargs):
        asked.update(kwargs)
        return str(FIXTURES / "healthbench.jsonl")

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_download)
    tasks = healthbench.load_tasks(healthbench.Options())
    assert [t.task_id for t in tasks] == ["healthbench_fake-hb-0001", "healthbench_fake-hb-0002"]
    assert asked["repo_id"] == "openai/healthbench" and asked["repo_type"] == "dataset"
    assert asked["filename"] == "hard_2025-05-08-21-00-10.jsonl"
    assert re.fullmatch(r"[0-9a-f]{40}", asked["revision"])
    healthbench.load_tasks(healthbench.Options(revision="abc123"))
    assert asked["revision"] == "abc123"
