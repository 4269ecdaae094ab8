"""The treatment as the engine carries it out: a custom framing sent as separate messages to a
real OpenAI-compatible server, stored and shown as such; feedback_mode none resampling with only
the framing, never asking a critic, never showing grading data."""

from __future__ import annotations

import json
import subprocess
import sys

from helpers import rows, write_variant
from procs import env

from seqk import models, store
from seqk.config import spec as runspec
from seqk.records import stored_chat
from seqk.run import scheduler as engine

SYSTEM = "You solve grid puzzles. Answer with JSON only."
LATER = "Attempt {t} of {k}: your last grid was wrong; look again."


def test_a_custom_framing_as_messages_runs_is_stored_and_shown_as_separate_messages(tmp_path):
    from servers import ScriptedServer
    from starlette.testclient import TestClient

    from seqk.view import render
    from seqk.view.app import create_app

    db = tmp_path / "seqk.duckdb"
    keys = {"metric": "seq@k", "k": 3, "feedback_mode": "cell_match", "model": "openai/grid-model",
            "max_tasks": 1, "options": {"split": "evaluation"}}
    with ScriptedServer([]) as server:  # answers "hello there": wrong every time, all k attempts run
        variant = write_variant(tmp_path, "custom.yaml", benchmark="arcagi2", api_base=server.api_base, **keys,
                                prompt={"system": SYSTEM, "framing_later": LATER, "history": "messages"})
        done = subprocess.run([sys.executable, "-m", "seqk", "run", str(variant), "--db", str(db), "--no-export"],
                              env=env(), capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        default = runspec.load(write_variant(tmp_path, "default.yaml", benchmark="arcagi2",
                                             api_base=server.api_base, **keys))
    [(run_id,)] = rows(db, "SELECT run_id FROM runs")
    assert run_id.startswith(default.run_id + "+prompt-") and run_id != default.run_id
    # what the server received: the conversation, one message per turn
    sent = [r["messages"] for r in server.requests]
    assert [[m["role"] for m in messages] for messages in sent] == [
        ["system", "user"], ["system", "user", "assistant", "user"],
        ["system", "user", "assistant", "user", "assistant", "user"]]
    second = sent[1]
    assert second[0]["content"] == SYSTEM and second[2]["content"] == "hello there"
    assert second[3]["content"].startswith("Attempt 2 of 3: your last grid was wrong; look again.\n\n<Feedback 1>\n")
    assert sent[2][:4] == second  # each attempt extends the one before
    # what was stored: exactly that, as messages
    stored = dict(rows(db, "SELECT attempt_index, prompt FROM attempts WHERE task_index = 1"))
    assert stored_chat(stored[2]) == second and json.loads(stored[3]) == sent[2]
    [(call_prompt,)] = rows(db, "SELECT prompt FROM calls WHERE role = 'actor' AND attempt_index = 2")
    assert call_prompt == stored[2]
    # what a user is shown: seqk inspect, and the viewer's task page
    shown = subprocess.run([sys.executable, "-m", "seqk", "inspect", run_id, "--task-index", "1", "--db", str(db)],
                           env=env(), capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert f"[system]\n{SYSTEM}\n\n[user]\n" in shown.stdout
    assert "[assistant]\nhello there\n\n[user]\nAttempt 2 of 3: your last grid was wrong" in shown.stdout
    page = TestClient(create_app(store.open(db))).get(render.Urls().task(run_id, 1))
    assert page.status_code == 200
    assert "retry prompt: not the seed's (framing_later" in page.text and "sent as separate messages" in page.text
    assert page.text.count('<div class="message assistant">') == 1 + 2  # attempts 2 and 3: one and two turns
    assert "Attempt 2 of 3: your last grid was wrong; look again." in page.text


def test_feedback_mode_none_resamples_with_the_framing_alone(tmp_path, db):
    seen: list[str] = []

    def actor(prompt: str) -> str:
        seen.append(prompt)
        return "wrong"

    models.register_mock("mock/actor", actor)
    models.register_mock("mock/critic", lambda prompt: (_ for _ in ()).throw(AssertionError("critic called")))
    keys = dict(metric="seq@k", model="mock/actor", critic_model="mock/critic", options={"n": 2},
                feedback_mode="none")
    spec = runspec.load(write_variant(tmp_path, k=2, **keys))
    assert spec.critic.model is None and spec.run_id == "toy-plain/seqk/mock__actor/deterministic/none"
    engine.run(spec, db)
    # extended later, a chain goes on from its last attempt, which has no feedback and needs none
    extended = runspec.load(write_variant(tmp_path, k=3, **keys, **{"continue": True}))
    result = engine.run(extended, db)
    assert result.prepared.action == "extend" and result.attempts_errored == 0
    assert rows(db, "SELECT task_index, attempt_index, prompt, feedback FROM attempts ORDER BY 1, 2") == [
        (i, t, f"Say the word w{i}.\n\nThis is attempt {t} of {k}.", None)
        for i in (1, 2) for t, k in ((1, 2), (2, 2), (3, 3))]
    assert rows(db, "SELECT DISTINCT role FROM calls") == [("actor",)]
    assert not any("wrong" in p or "Incorrect" in p for p in seen)  # nothing of the earlier attempts


def test_feedback_mode_none_never_shows_grading_data_even_where_the_benchmark_would(tmp_path, db):
    """toy's `hint` feedback names the expected word; under none the actor never reads feedback."""
    seen: list[str] = []
    models.register_mock("mock/actor", lambda prompt: seen.append(prompt) or "wrong")
    spec = runspec.load(write_variant(tmp_path, metric="seq@k", k=3, model="mock/actor", feedback_mode="none",
                                      options={"n": 2, "flavour": "spicy"}, prompt={"framing_first": ""}))
    assert not spec.mode.shows_grading_info and spec.mode.shows_history is False
    engine.run(spec, db)
    assert set(seen) == {"Say the word w1. Spicy!", "Say the word w2. Spicy!"}  # the bare task, every time
    assert len(seen) == 6 and rows(db, "SELECT count(*) FROM attempts WHERE feedback IS NOT NULL") == [(0,)]



def plan_output(*more: str, db) -> str:
    from pathlib import Path

    variant = Path(__file__).resolve().parents[2] / "variants" / "arcagi2" / "mock.yaml"
    done = subprocess.run([sys.executable, "-m", "seqk", "plan", str(variant), "--db", str(db), "--set", "max_tasks=1",
                           *more], env=env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not db.exists()  # a plan spends nothing and writes nothing
    return done.stdout


def test_plan_prints_the_prompt_attempt_2_would_see(tmp_path):
    seed = plan_output(db=tmp_path / "x.duckdb")
    assert "  retry prompt: the seed's\n  attempt 2 would see (task 1):\n    │ Solve this ARC-AGI-2 puzzle." in seed
    assert "(task 1's prompt: " in seed  # a long task is cut; what follows it is shown whole
    assert ("    │ This is attempt 2 of 3. Review your previous attempt(s) and the feedback below, then provide "
            "an improved answer.\n    │ \n    │ <PreviousAttempt 1>\n    │ ‹attempt 1's output›\n"
            "    │ </PreviousAttempt 1>\n    │ \n    │ <Feedback 1>\n    │ ‹the feedback on attempt 1›\n"
            "    │ </Feedback 1>\n") in seed
    custom = plan_output("--set", "prompt.framing_later=Try {t} of {k}.", "--set", "prompt.history=messages",
                         db=tmp_path / "x.duckdb")
    assert 'retry prompt: not the seed\'s: framing_later "Try {t} of {k}.", history "messages"' in custom
    assert "attempt 2 would see (task 1, 3 messages):" in custom
    assert ("    │ [assistant]\n    │ ‹attempt 1's output›\n    │ \n    │ [user]\n    │ Try 2 of 3.\n    │ \n"
            "    │ <Feedback 1>\n    │ ‹the feedback on attempt 1›\n    │ </Feedback 1>\n") in custom
    blind = plan_output("--set", "feedback_mode=none", db=tmp_path / "x.duckdb")
    assert "    │ This is attempt 2 of 3.\n" in blind and "‹" not in blind  # nothing of attempt 1
