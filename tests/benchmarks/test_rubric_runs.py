"""Whole runs of the rubric benchmarks: the data file's hash in the fingerprint, a judge
error re-judged on the kept output, and pass@k plus seq@k against OpenAI-compatible loopback
servers for actor, judge and critic (each role its own api_base), then report and export."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from helpers import rows, write_variant
from rubrichelp import FIXTURES, LoopbackServer
from typer.testing import CliRunner

from seqk import models
from seqk.cli import app
from seqk.config import runspec
from seqk.errors import RunConflict
from seqk.render import text as report_text
from seqk.run import engine

HB = str(FIXTURES / "healthbench.jsonl")
GOOD, BAD = "GOOD ANSWER", "BAD ANSWER"




def hb_spec(tmp_path, data=HB, **keys):
    keys = {"benchmark": "healthbench", "metric": "seq@k", "k": 2, "model": "mock/actor",
            "judge_model": "mock/judge", "options": {"data_path": data},
            "retry": {"max_retries": 0, "base_delay_s": 0.0}} | keys
    return runspec.load(write_variant(tmp_path, **keys))


def test_the_data_file_hash_is_in_the_fingerprint_so_two_files_never_mix(tmp_path, db):
    same = tmp_path / "copy.jsonl"
    shutil.copy(HB, same)
    changed = tmp_path / "changed.jsonl"
    changed.write_text(Path(HB).read_text().replace("mild headache", "mild backache"))
    models.register_mock("mock/actor", [BAD])
    models.register_mock("mock/judge", ['{"criteria_met": false}'])
    a, b, c = hb_spec(tmp_path), hb_spec(tmp_path, str(same)), hb_spec(tmp_path, str(changed))
    assert a.run_id == b.run_id == c.run_id
    assert a.fingerprint() == b.fingerprint()  # the path is not part of the identity; the bytes are
    assert a.fingerprint_fields()["data_sha256"] != c.fingerprint_fields()["data_sha256"]
    engine.run(a, db)
    assert engine.run(b, db).prepared.action == "resume"
    with pytest.raises(RunConflict, match="data_sha256"):
        engine.run(c, db)


def test_an_unreadable_grader_reply_is_rejudged_on_the_kept_answer(tmp_path, db):
    actor = models.register_mock("mock/actor", [BAD])
    models.register_mock("mock/judge", lambda p: "I agree." if "[7]" in p else '{"criteria_met": false}')
    spec = hb_spec(tmp_path, k=1, task_indices=[1])
    first = engine.run(spec, db)
    assert first.error_kinds == {"judge:JudgeError": 1}
    assert rows(db, "SELECT status, output, success FROM attempts") == [("error", BAD, None)]
    assert "rubric item 2 of 3" in rows(db, "SELECT error->>'message' FROM attempts")[0][0]

    judge = models.register_mock("mock/judge", lambda p: '{"criteria_met": true}' if "[-6]" not in p
                                 else '{"criteria_met": false}')
    again = engine.run(spec, db)
    assert actor.calls == 1 and judge.calls == 3 and again.tasks_passed == 1
    assert rows(db, "SELECT status, output, success FROM current_attempts") == [("ok", BAD, True)]
    assert rows(db, "SELECT role, count(*) FROM calls GROUP BY 1 ORDER BY 1") == [("actor", 1), ("judge", 6)]


# --- end to end against loopback servers ---------------------------------------------


def clbench_judge(prompt):
    score = int(GOOD in prompt)
    return json.dumps({"Grading Rationale": "r", "List of Requirement Satisfaction Status": ["yes"] * 2,
                       "Overall Score": score})


def advancedif_judge(prompt):
    n = len(re.findall(r"^\d+\. ", prompt.split("## Requirements")[1], re.MULTILINE))
    return json.dumps({"verdicts": [{"question": i, "met": GOOD in prompt, "reason": "r"} for i in range(1, n + 1)]})


def healthbench_judge(prompt):
    points = float(re.search(r"# Rubric item\n\[(-?[\d.]+)\]", prompt).group(1))
    return json.dumps({"explanation": "e", "criteria_met": GOOD in prompt and points > 0})


def researchrubrics_judge(prompt):
    weight = float(re.search(r"Weight: (-?[\d.]+)", prompt).group(1))
    met = GOOD in prompt and weight > 0
    return json.dumps({"verdict": "Satisfied" if met else "Not Satisfied", "score": float(met)})


CASES = {
    "clbench": (clbench_judge, "socratic", "clbench-dkr"),
    "advancedif": (advancedif_judge, "compact", "advancedif"),
    "healthbench": (healthbench_judge, "judge", "healthbench-default"),
    "researchrubrics": (researchrubrics_judge, "critic", "researchrubrics"),
}


@pytest.mark.parametrize("bench", list(CASES))
def test_pass_and_seq_runs_against_three_servers_then_report_and_export(bench, tmp_path, db):
    judge_reply, mode, slice_name = CASES[bench]
    with LoopbackServer(lambda p: GOOD if "<Feedback 1>" in p else BAD) as actor, \
            LoopbackServer(judge_reply) as judge, LoopbackServer(lambda p: "Try harder here.") as critic:
        keys = {"benchmark": bench, "k": 2, "feedback_mode": mode, "model": "openai/actor-model",
                "judge_model": "openai/judge-model", "critic_model": "openai/critic-model",
                "actor": {"api_base": actor.api_base}, "judge": {"api_base": judge.api_base},
                "critic": {"api_base": critic.api_base, "temperature": 0.7},
                "options": {"data_path": str(FIXTURES / f"{bench}.jsonl")}}
        runs = {}
        for metric in ("pass@k", "seq@k"):
            spec = runspec.load(write_variant(tmp_path, f"{metric[:-2]}.yaml", metric=metric, **keys))
            runs[metric] = (spec, engine.run(spec, db))
    n_tasks = len(runs["pass@k"][0].tasks)
    pass_result, seq_result = runs["pass@k"][1], runs["seq@k"][1]
    assert pass_result.tasks_failed == n_tasks and pass_result.attempts_written == 2 * n_tasks
    assert seq_result.tasks_passed == n_tasks and not seq_result.error_kinds
    assert all(rid.startswith(slice_name + "/") for rid in (runs[m][0].run_id for m in runs))
    uses_critic = bench != "advancedif"
    assert len(critic.prompts) == (n_tasks if uses_critic else 0)
    feedback = "Try harder here." if uses_critic else "Unmet requirements: question_1 (r)"
    seq_id = runs["seq@k"][0].run_id
    second = rows(db, f"SELECT prompt FROM attempts WHERE run_id = '{seq_id}' AND attempt_index = 2")
    assert len(second) == n_tasks and all(f"<Feedback 1>\n{feedback}" in p for (p,) in second)
    assert rows(db, f"SELECT DISTINCT model FROM calls WHERE run_id = '{seq_id}' ORDER BY 1") == (
        [("openai/actor-model",), ("openai/critic-model",), ("openai/judge-model",)] if uses_critic
        else [("openai/actor-model",), ("openai/judge-model",)])

    cli = CliRunner()
    report = cli.invoke(app, ["report", "--compare", "--format", "markdown", "--db", str(db)])
    assert report.exit_code == 0, report.output
    assert slice_name in report.output
    exported = cli.invoke(app, ["export", "--to", str(tmp_path / "out"), "--db", str(db)])
    assert exported.exit_code == 0, exported.output
    assert (tmp_path / "out" / seq_id).is_dir()
    parquet = cli.invoke(app, ["export", "--parquet", str(tmp_path / "pq"), "--db", str(db)])
    assert parquet.exit_code == 0, parquet.output


# --- HealthBench's aggregation: scores unclipped, the mean clipped -------------------


def negative_points_judge(task2_met: bool):
    """Task 1: only its -6 item met, score -6/12; task 2 (Zoloxin): its one +6 item as asked."""
    return lambda p: json.dumps({"explanation": "e",
                                 "criteria_met": "[-6]" in p or ("Zoloxin" in p and task2_met)})


@pytest.mark.parametrize("task2_met, mean", [(True, 0.25), (False, 0.0)])
def test_healthbench_keeps_negative_scores_and_reports_the_clipped_mean(task2_met, mean, tmp_path, db):
    models.register_mock("mock/actor", [BAD])
    models.register_mock("mock/judge", negative_points_judge(task2_met))
    spec = hb_spec(tmp_path, metric="pass@k", k=1)
    engine.run(spec, db)
    scores = rows(db, "SELECT task_index, score, success FROM attempts ORDER BY 1")
    assert scores == [(1, -0.5, False), (2, 1.0 if task2_met else 0.0, task2_met)]
    # (−0.5 + 1) / 2 = 0.25, not the 0.5 that clipping each score would give; (−0.5 + 0) / 2 → 0.
    cli = CliRunner()
    data = json.loads(cli.invoke(app, ["report", "--format", "json", "--db", str(db)]).output)
    (run,) = data["runs"]
    assert run["soft_score_clipped"] is True
    assert run["curve"][0]["soft_score"] == pytest.approx(mean) and run["curve"][0]["n_first_t"] == 2
    assert "soft score of healthbench runs: each attempt's score is kept unclipped (negative points can take " \
           "it below 0); the mean over tasks is clipped to [0, 1], as that benchmark computes it." \
           in cli.invoke(app, ["report", "--db", str(db)]).output
    summary = report_text.closing_summary(spec.run_id, db)
    assert f"{mean:.3f}" in summary.splitlines()[2]
    assert "soft score: mean of the tasks' best unclipped scores, clipped to [0, 1] after averaging " \
           "(HealthBench's rule)." in summary
