"""Every command that takes --db works on a lake (PostgreSQL catalog, data on moto's S3) as on a
DuckDB file: run, plan, status, inspect, sql, rejudge, report (--compare, --judges), compare, export
(folders and Parquet), import, upload, view --bundle, lake compact and limits. A command added with a
--db option and not driven here fails the last test: drive it on a lake, or make it refuse a lake
in one line."""

from __future__ import annotations

import json

import pytest
import typer.main
from helpers import write_variant
from scripts import solves_on
from typer.testing import CliRunner

from seqk import models
from seqk.cli import app

runner = CliRunner()
DRIVEN = {"run", "plan", "status", "inspect", "sql", "rejudge", "report", "export", "import", "upload",
          "view", "lake compact", "limits", "compare"}


def seqk(*args: str) -> str:
    out = runner.invoke(app, list(args))
    assert out.exit_code == 0, f"seqk {' '.join(args)}: {out.output}"
    return out.output


@pytest.fixture
def judges():
    def judge(prompt: str) -> str:
        answer, word = prompt.split("'")[1], prompt.split("the word ")[1].split("?")[0]
        return "YES" if answer == word else "NO"

    models.register_mock("mock/judge1", judge)
    models.register_mock("mock/judge2", lambda prompt: "YES" if "word w4?" in prompt else judge(prompt))


def test_every_command_with_a_db_works_on_a_lake(tmp_path, lake_url, judges):
    models.register_mock("mock/actor", solves_on({1: 1, 2: 2}))
    seq = write_variant(tmp_path, "seq.yaml", metric="seq@k", k=2, model="mock/actor", options={"n": 3})
    passk = write_variant(tmp_path, "pass.yaml", metric="pass@k", k=2, model="mock/actor", options={"n": 3})
    judged = write_variant(tmp_path, "judged.yaml", benchmark="toyjudge", metric="pass@k", k=2,
                           model="mock/py:scripts:odd_tasks_right", judge_model="mock/judge1", options={"n": 4})
    assert "new run" in seqk("plan", str(seq), "--db", lake_url)
    for variant in (seq, passk, judged):
        seqk("run", str(variant), "--db", lake_url, "--no-export")
    assert "resume" in seqk("plan", str(seq), "--db", lake_url)
    status = json.loads(seqk("status", "--db", lake_url, "--json"))
    assert {r["metric"] for r in status} == {"seq@k", "pass@k"} and len(status) == 3
    run_id = next(r["run_id"] for r in status if r["metric"] == "seq@k")
    source = next(r["run_id"] for r in status if r["benchmark"] == "toyjudge")
    assert "attempt 2" in seqk("inspect", run_id, "--task-index", "2", "--db", lake_url)
    assert seqk("sql", "SELECT count(*) AS n FROM runs", "--db", lake_url, "--format", "csv") == "n\n3\n"
    assert "lift" in seqk("report", "--compare", "--db", lake_url)
    passk_id = next(r["run_id"] for r in status if r["metric"] == "pass@k" and r["benchmark"] != "toyjudge")
    assert "3 task(s) both runs hold" in seqk("compare", run_id, passk_id, "--db", lake_url)
    assert "judged" in seqk("rejudge", source, "--judge-model", "mock/judge2", "--db", lake_url).lower()
    assert "kappa" in seqk("report", "--judges", source.replace("mock__judge1", "mock__judge2.rejudge.mock__judge1"),
                            "--db", lake_url).lower()
    out = tmp_path / "out"
    assert "exported" in seqk("export", run_id, "--db", lake_url, "--to", str(out))
    assert "attempts rows" in seqk("export", "--parquet", str(tmp_path / "pq"), "--db", lake_url)
    assert "imported" in seqk("import", str(out), "--db", lake_url).lower()
    assert "verified" in seqk("upload", run_id, "--bucket", "seqk-lake", "--from", str(out), "--db", lake_url)
    assert "wrote" in seqk("view", "--db", lake_url, "--bundle", str(tmp_path / "site"))
    assert "compacted" in seqk("lake", "compact", "--db", lake_url)
    # mock models are not remembered: the lake answers, and has nothing to say yet
    assert "no endpoint limit remembered yet" in seqk("limits", "--db", lake_url)
    assert "forgot 0 remembered limit(s)" in seqk("limits", "--reset", "--db", lake_url)


def test_the_commands_driven_on_a_lake_are_every_command_with_a_db():
    def walk(group, prefix=()):
        for name, command in group.commands.items():
            if hasattr(command, "commands"):
                yield from walk(command, (*prefix, name))
            elif any(p.name == "db" for p in command.params):
                yield " ".join((*prefix, name))

    assert set(walk(typer.main.get_command(app))) == DRIVEN
