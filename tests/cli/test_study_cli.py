"""`seqk study` end to end against a loopback model server answering 600 ARC-AGI-2 training
tasks: where feedback adds 0.25 to the per-attempt success, the study decides "seq better" on well
under half of the tasks and prints the money saved, also when it is killed mid-way (a real
subprocess, SIGKILL while the server holds calls in flight) and resumed: the same looks, the same
decision, no attempt twice. Where feedback does nothing, it does not decide "seq better". `seqk plan`
of a study file; bad study files exit 2 with one line."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from helpers import rows
from procs import env
from scripts import arc_world
from servers import WorldServer

from seqk import api

pytestmark = pytest.mark.slow  # real subprocesses over 600 tasks

N_TASKS = 600


def arc_study(folder: Path, api_base: str, **keys) -> Path:
    """seq@k (binary feedback) against pass@k, k = 3, on 600 ARC-AGI-2 training tasks, priced."""
    for name, metric in (("seq.yaml", "seq@k"), ("pass.yaml", "pass@k")):
        path = folder / "variants" / "arcagi2" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(dict(
            metric=metric, k=3, feedback_mode="binary", model="openai/world", api_base=api_base, seed=1,
            max_tokens=64, concurrency=16, max_tasks=N_TASKS, options={"split": "training"},
            actor={"price": {"input": 1.0, "output": 4.0}})))
    study = folder / "study.yaml"
    study.write_text(yaml.safe_dump({"arms": {"seq": "variants/arcagi2/seq.yaml",
                                              "partner": "variants/arcagi2/pass.yaml"},
                                     "question": "lift", "alpha": 0.05, "seed": 1} | keys))
    return study


def seqk_study(study: Path, db: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "seqk", "study", str(study), "--db", str(db), "--no-export",
                           *extra], env=env(), capture_output=True, text=True, timeout=900)


def looks(db: Path) -> list[tuple]:
    return rows(db, "SELECT update_index, n_tasks, n_used, n_ranged, estimate, low, high, decision, stop_reason, "
                    "spent_usd FROM study_updates ORDER BY update_index")


def test_killed_mid_way_it_resumes_to_the_same_decision_on_well_under_half_the_tasks(tmp_path):
    with WorldServer(arc_world(0.25)) as server:
        study = arc_study(tmp_path, server.api_base)
        reference = tmp_path / "reference.duckdb"
        ref = api.run_study(study, reference, export=False, upload=False).result
        assert ref.decision == "seq_better" and len(ref.updates) >= 2
        # Killed in its second window: after the first window's calls and 40 more, calls wait.
        first_window = rows(reference, "SELECT count(*) FROM calls c JOIN study_tasks s USING (task_index) "
                                       "WHERE s.position <= 32")[0][0]
        db = tmp_path / "seqk.duckdb"
        server.answered = 0
        server.hold_after(first_window + 40)
        proc = subprocess.Popen([sys.executable, "-m", "seqk", "study", str(study), "--db", str(db),
                                 "--no-export"], env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 600
        while not server.holding() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.5)  # the calls behind the gate are in flight, the first look written
        proc.kill()
        proc.communicate()
        server.release()
        before = looks(db)
        assert len(before) == 1 and before[0][1] == 32  # one look stored, the second window cut short
        paid_before = rows(db, "SELECT count(*) FROM attempts")[0][0]
        assert paid_before > first_window // 2

        resumed = seqk_study(study, db, "--format", "json")
        assert resumed.returncode == 0, resumed.stderr
        data = json.loads(resumed.stdout)
        assert {"decision", "stop_reason", "tasks_used", "tasks_available", "spent_usd", "full_cost_usd",
                "sequence"} <= set(data) and {"low", "high"} <= set(data["sequence"])
        assert data["decision"] == "seq_better" and data["stop_reason"] == "decided"
        assert data["tasks_available"] == N_TASKS and data["tasks_used"] < N_TASKS / 3
        assert data["sequence"]["low"] > 0
        # The same sequence at every look as the study that was never killed, and no paid slot twice.
        assert looks(db)[0] == before[0]
        assert [look[:9] for look in looks(db)] == [look[:9] for look in looks(reference)]
        assert rows(db, "SELECT run_id, task_index, chain_index, attempt_index FROM attempts WHERE status = 'ok' "
                        "GROUP BY ALL HAVING count(*) > 1") == []
        assert rows(db, "SELECT count(*) FROM attempts")[0][0] == rows(reference, "SELECT count(*) FROM attempts")[0][0]
        assert data["spent_usd"] == pytest.approx(ref.to_json()["spent_usd"])

        # Asked again, the stopped study spends nothing and prints its decision and the money saved.
        text = seqk_study(study, db)
        assert text.returncode == 0, text.stderr
        assert "decision: seq better (decided)" in text.stdout
        saved = data["full_cost_usd"] - data["spent_usd"]
        assert f"saved ${saved:.4f}" in text.stdout and saved > data["spent_usd"]
        assert f"tasks used: {data['tasks_used']} of {N_TASKS}" in text.stdout
        assert "(resumed)" in text.stderr and "task order (seed 1):" in text.stderr


def test_where_feedback_does_nothing_it_does_not_decide_seq_better(tmp_path):
    with WorldServer(arc_world(0.0)) as server:
        study = arc_study(tmp_path, server.api_base, window=64)
        result = api.run_study(study, tmp_path / "seqk.duckdb", export=False, upload=False).result
    assert result.decision != "seq_better"
    assert result.stop_reason in ("tasks_exhausted", "decided")
    if result.stop_reason == "tasks_exhausted":
        assert result.last.n_tasks == N_TASKS and result.last.low < 0 < result.last.high


def test_plan_of_a_study_prints_tasks_and_dollars_to_a_decision_beside_fixed_n(tmp_path):
    study = arc_study(tmp_path, "http://127.0.0.1:9/v1")
    found = subprocess.run([sys.executable, "-m", "seqk", "plan", str(study), "--db", str(tmp_path / "x.duckdb"),
                            "--lift", "0.1"], env=env(), capture_output=True, text=True, timeout=300)
    assert found.returncode == 0, found.stderr
    out = found.stdout
    assert f"{N_TASKS} tasks, 32 a window, α = 0.05" in out
    assert "in a world with no lift it decides a sign in" in out
    line = next(x for x in out.splitlines() if x.strip().startswith("0.100"))
    from seqk.power import tasks_needed

    # the fixed-n test's tasks at psi 0.3 (exact power of the report's paired test), beside the study's
    assert f" {tasks_needed(0.1, 0.3)} " in line
    assert not (tmp_path / "x.duckdb").exists()


@pytest.mark.parametrize(("keys", "message"), [
    ({"alpha": 2}, "alpha: Input should be less than 1"),
    ({"colour": "red"}, "[C02] colour: unknown key"),
    ({"question": "equal_budget"}, "budget_usd_per_task: question: equal_budget needs"),
])
def test_a_bad_study_file_exits_2_with_one_clear_line(tmp_path, keys, message):
    study = arc_study(tmp_path, "http://127.0.0.1:9/v1", **keys)
    found = seqk_study(study, tmp_path / "seqk.duckdb")
    assert found.returncode == 2 and message in found.stderr, found.stderr
    assert not (tmp_path / "seqk.duckdb").exists()


def test_a_partner_with_a_smaller_k_is_refused(tmp_path):
    study = arc_study(tmp_path, "http://127.0.0.1:9/v1")
    passk = tmp_path / "variants" / "arcagi2" / "pass.yaml"
    passk.write_text(passk.read_text().replace("k: 3", "k: 2"))
    found = seqk_study(study, tmp_path / "seqk.duckdb")
    assert found.returncode == 2
    assert "arms.partner: the partner has k=2, below the seq arm's k=3" in found.stderr


def test_ctrl_c_stops_a_study_cleanly_and_the_same_command_resumes_it(tmp_path):
    with WorldServer(arc_world(0.25)) as server:
        study = arc_study(tmp_path, server.api_base)
        db = tmp_path / "seqk.duckdb"
        server.hold_after(60)  # inside the first window: both arms have calls in flight
        proc = subprocess.Popen([sys.executable, "-m", "seqk", "study", str(study), "--db", str(db), "--no-export"],
                                env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 600
        while not server.holding() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        proc.send_signal(2)
        out, err = proc.communicate(timeout=120)
        server.release()
        assert proc.returncode == 130, err
        assert "interrupted: writing the attempts that finished" in err
        assert "interrupted: what finished is saved; run the same command to resume the study" in out
        assert looks(db) == []  # the window was cut short: nothing entered
        kept = rows(db, "SELECT count(*) FROM attempts")[0][0]
        assert 0 < kept <= 60
        resumed = seqk_study(study, db, "--format", "json")
        assert resumed.returncode == 0, resumed.stderr
        assert json.loads(resumed.stdout)["decision"] == "seq_better"
        assert rows(db, "SELECT run_id, task_index, chain_index, attempt_index FROM attempts WHERE status = 'ok' "
                        "GROUP BY ALL HAVING count(*) > 1") == []
