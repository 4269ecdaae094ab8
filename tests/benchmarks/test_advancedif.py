"""advancedif: JSONL and CSV loading (string-encoded cells, aliases, skipped records), the
single-turn rule, the verdict contract and its fallbacks, and the three template modes."""

from __future__ import annotations

import csv
import json
import logging
import re

import pytest
from helpers import context
from rubrichelp import FIXTURES, ScriptedRole, run

from benchmarks.advancedif import benchmark
from seqk.errors import ConfigError, DataFileError, JudgeError

DATA = FIXTURES / "advancedif.jsonl"
PASS = ('{"verdicts": [{"question": 1, "met": true, "reason": "two lines"}, '
        '{"question": 2, "met": "yes", "reason": "no commas"}]}')
FAIL = ('```json {"verdicts": [{"question": 1, "met": true, "reason": "ok"}, '
        '{"question": 2, "met": false, "reason": "contains a comma"}]} ```')


def load(path=DATA):
    return benchmark.load_tasks(benchmark.Options(data_path=str(path)))


TASKS = load()


def verify(reply, task=TASKS[0]):
    return run(benchmark.verify(task, "Plink glows\nPlink sleeps", context(benchmark, judge=ScriptedRole([reply]))))


def test_loading_ids_prompts_and_aliases():
    assert benchmark.slice_name(benchmark.Options(data_path=str(DATA))) == "advancedif"
    assert [t.task_id for t in TASKS] == ["advancedif_00002", "advancedif_00003", "fake-aif-3"]
    assert TASKS[0].prompt == "FAKE TASK: write a two-line poem about the imaginary moon Plink. Use no commas."
    assert TASKS[0].answer.rubrics == ["Is the poem exactly two lines?", "Does it avoid commas?"]
    assert [t.answer.benchmark_name for t in TASKS] == [
        "if_complex_if_oss", "if_system_steerability_oss", "if_carried_context_oss"]
    assert TASKS[1].prompt.startswith("You are the assistant in the conversation below. Follow its system "
                                      "instructions")
    assert "SYSTEM:\nFAKE SYSTEM: reply only in lower case.\n\nUSER:\nName two invented planets." in TASKS[1].prompt
    assert "Follow its system" not in TASKS[2].prompt and "ASSISTANT:\nUnderstood, will comply." in TASKS[2].prompt


def test_the_public_csv_loads_like_its_jsonl_mirror(tmp_path):
    path = tmp_path / "if_oss_full_data.csv"
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, ["conversation_history", "prompt_metadata", "benchmark_name"])
        writer.writeheader()
        for line in DATA.read_text().splitlines()[:2]:
            record = json.loads(line)
            writer.writerow({key: value if isinstance(value, str) else json.dumps(value)
                             for key, value in record.items() if key in writer.fieldnames})
    tasks = load(path)
    assert [(t.task_id, t.prompt, t.answer.rubrics) for t in tasks] == [
        (t.task_id, t.prompt, t.answer.rubrics) for t in TASKS[:2]]


def test_malformed_records_stop_the_load_or_are_skipped_keeping_the_file_numbering(tmp_path, caplog):
    lines = DATA.read_text().split("\n")
    bad = [
        "not json",
        json.dumps({"benchmark_name": "x", "conversation_history": ["not an object"], "rubrics": ["r"]}),
        json.dumps({"benchmark_name": "x", "conversation_history": [{"role": "user", "content": "q"}]}),
        json.dumps({"conversation_history": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}],
                    "rubrics": ["r"]}),
    ]
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(bad + lines[2:]) + "\n")
    # file:line:column for a record that does not parse, file:line: field for one that does not fit
    expected = {1: ":1: record: expected one JSON value per line", 2: ": conversation_history: expected",
                3: ": rubrics: expected", 4: ": benchmark_name: expected"}
    for line, message in expected.items():
        text = "\n".join([*bad[line - 1:line], *lines[2:]]) + "\n"
        path.write_text("\n" * (line - 1) + text)  # blank lines: the error names the file's line
        with pytest.raises(DataFileError, match=rf"^{re.escape(str(path))}:{line}{message}"):
            load(path)
    path.write_text("\n".join(bad + lines[2:]) + "\n")
    with caplog.at_level(logging.WARNING, logger="seqk"):
        tasks = benchmark.load_tasks(benchmark.Options(data_path=str(path), skip_invalid_records=True))
    assert [(t.task_index, t.task_id) for t in tasks] == [(5, "fake-aif-3")]
    assert f"skipped 4 record(s) of {path} that do not fit the schema (lines 1, 2, 3, 4)" in caplog.text
    path.write_text("\n".join(bad) + "\n")
    with pytest.raises(ConfigError, match=r"no advancedif task .* \(4 record"):
        benchmark.load_tasks(benchmark.Options(data_path=str(path), skip_invalid_records=True))


def test_single_turn_only_when_the_conversation_is_one_user_message(tmp_path):
    record = {"benchmark_name": "complex_if_single_turn_v5", "rubrics": ["r"], "conversation_history": [
        {"role": "system", "content": "SYS"}, {"role": "user", "content": "USER TURN"}]}
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(record) + "\n")
    (task,) = load(path)
    assert "USER TURN" in task.prompt and "SYS" in task.prompt


def test_pass_when_every_requirement_is_met():
    verdict = verify(PASS)
    assert verdict.success and verdict.score == 1.0 and verdict.raw_eval_output == ""
    assert verdict.details["met_count"] == 2 and verdict.details["rubric_count"] == 2


def test_fail_raw_and_compact_feedback():
    verdict = verify(FAIL)
    assert not verdict.success and verdict.score == 0.0
    assert verdict.raw_eval_output == "question_1: Yes | question_2: No — contains a comma"
    fb = {mode: run(benchmark.feedback(TASKS[0], "x", verdict, context(benchmark, mode=mode, critic=ScriptedRole([]))))
          for mode in ("binary", "raw", "compact")}
    assert fb["raw"] == verdict.raw_eval_output
    assert fb["compact"] == "Unmet requirements: question_2 (contains a comma)"
    assert "did not satisfy all of the instruction requirements" in fb["binary"]
    flags = {m.name: (m.llm_critic, m.shows_grading_info) for m in benchmark.feedback_modes}
    assert flags == {"binary": (False, False), "raw": (False, True), "compact": (False, True)}


def test_judge_sees_the_transcript_the_response_and_the_numbered_requirements():
    role = ScriptedRole([PASS])
    run(benchmark.verify(TASKS[0], "MY POEM", context(benchmark, judge=role)))
    prompt = role.prompts[0]
    assert "USER:\nFAKE TASK: write a two-line poem" in prompt  # the transcript, also when single-turn
    assert "MY POEM" in prompt and "1. Is the poem exactly two lines?\n2. Does it avoid commas?" in prompt


@pytest.mark.parametrize("reply", [
    '{"verdicts": [{"question": 1, "met": true, "reason": "ok"}]}',  # one verdict for two requirements
    '{"verdicts": [{"question": 1, "met": true}, {"question": 2, "reason": "no met key"}]}',
    '{"verdicts": [{"met": true}, {"met": "maybe"}]}',
    '{"result": "fine"}',
    "All good.",
])
def test_unreadable_verdicts_are_judge_errors(reply):
    with pytest.raises(JudgeError):
        verify(reply)


def test_met_labels_and_question_defaults():
    verdict = verify('Verdicts: {"verdicts": [{"met": "Met"}, {"met": "NOT MET", "reason": " r "}]} {x}')
    assert verdict.details["verdicts"] == [{"question": 1, "met": True, "reason": ""},
                                           {"question": 2, "met": False, "reason": "r"}]
