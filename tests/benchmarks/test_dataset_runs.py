"""A JSONL, a CSV and a Parquet file each run as pass@k and seq@k from a variant alone, with every
scorer; a changed file refuses to resume; a Hugging Face dataset comes from huggingface_hub's
cache only, and one not there is one line naming it and the command that fetches it."""

from __future__ import annotations

import json
from collections import Counter

import polars as pl
import pytest
from helpers import rows, write_variant

from seqk import models
from seqk.config import runspec
from seqk.errors import ConfigError, RunConflict
from seqk.run import engine

# Per scorer: its `scorer:`, each row's target, and a right and a wrong reply.
SCORERS = {
    "exact": ("exact", "Paris", "The Paris!", "Rome"),
    "includes": ("includes", "Paris", "It is Paris, I think", "Rome"),
    "match": ({"match": {"numeric": True}}, "42", "so it is 42.", "41"),
    "regex": ({"regex": "ANSWER: (\\w+)"}, "yes", "ANSWER: yes", "ANSWER: no"),
    "answer": ({"answer": "word"}, "yes", "I think\nANSWER: yes", "ANSWER: no"),
    "numeric": ("numeric", "42", "15 + 27 = 42. This is attempt 2 of 3.", "I am not sure."),
    "choice": ("choice", "B", "ANSWER: B", "ANSWER: C"),
    "json_field": ({"json_field": "answer"}, "Paris", '{"answer": "paris"}', '{"answer": "Rome"}'),
    "f1": ({"f1": {"threshold": 0.6}}, "the quick brown fox", "a quick brown fox", "a slow dog"),
    "llm_rubric": ({"llm_rubric": {"column": "rubric"}}, "Paris", "Paris, of course", "Rome"),
    "python": ({"python": "scripts:grade_python_scorer"}, "7", "7 cm", "7 m"),
}


def data_rows(n: int, target: str) -> list[dict]:
    return [{"id": f"q{i}", "question": f"Question {i}?", "answer": target,
             "options": ["w", "x", "y", "z"], "rubric": "The reply names Paris.", "unit": "cm"}
            for i in range(1, n + 1)]


def write_data(folder, fmt: str, data: list[dict]):
    path = folder / f"data.{fmt}"
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in data))
    elif fmt == "parquet":
        pl.DataFrame(data).write_parquet(path)
    else:  # a CSV cell holds the list of choices as JSON text
        pl.DataFrame([{**r, "options": json.dumps(r["options"])} for r in data]).write_csv(path)
    return path


def second_time_right(right: str, wrong: str):
    """Wrong on a task's first attempt (seq@k) or first sample (pass@k), right after."""
    seen: Counter[str] = Counter()

    def reply(prompt: str) -> str:
        seen[prompt] += 1
        later = "<PreviousAttempt 1>" in prompt or ("This is attempt" not in prompt and seen[prompt] > 1)
        return right if later else wrong
    return reply


# Every scorer reads JSONL, and the other formats each run the scorers whose cells they type
# differently (a CSV holds choices as JSON text, a number as text); the rest of the product
# (the same readers, the same scorers) is left to --run-slow, CI and the README's test command.
CROSSED = {"exact", "match", "choice", "json_field", "numeric"}
FORMATS_AND_SCORERS = [
    pytest.param(fmt, kind, marks=() if fmt == "jsonl" or kind in CROSSED else pytest.mark.slow)
    for kind in SCORERS for fmt in ("jsonl", "csv", "parquet")]


@pytest.mark.parametrize(("fmt", "kind"), FORMATS_AND_SCORERS)
def test_every_format_and_scorer_runs_as_pass_at_k_and_seq_at_k(tmp_path, db, fmt, kind):
    scorer, target, right, wrong = SCORERS[kind]
    path = write_data(tmp_path, fmt, data_rows(3, target))
    models.register_mock("mock/data-actor", second_time_right(right, wrong))
    models.register_mock("mock/data-judge", lambda p: json.dumps(
        {"met": "Paris" in p.split("## Response")[1].split("## Criterion")[0]}))
    options = {"path": str(path), "id": "id", "input": "question", "target": "answer", "scorer": scorer}
    if kind == "choice":
        options["choices"] = "options"
    results = {}
    for metric in ("pass@k", "seq@k"):
        variant = write_variant(tmp_path, f"{metric[:-2]}.yaml", benchmark="dataset", metric=metric, k=3,
                                model="mock/data-actor", judge_model="mock/data-judge", options=options)
        spec = runspec.load(variant)
        assert spec.slice_name == "data" and spec.run_id.split("/")[3] == (
            "mock__data-judge" if kind == "llm_rubric" else kind)
        results[metric] = engine.run(spec, db)
        assert results[metric].tasks_passed == 3 and not results[metric].error_kinds
    graded = rows(db, "SELECT r.metric, a.task_index, a.attempt_index, a.success FROM attempts a "
                      "JOIN runs r USING (run_id) ORDER BY 1, 2, 3")
    assert [(m, s) for m, _, _, s in graded if m == "seq@k"] == [("seq@k", False), ("seq@k", True)] * 3
    assert Counter(s for m, _, _, s in graded if m == "pass@k") == Counter({True: 6, False: 3})


def variant_of(tmp_path, path, **keys):
    options = {"path": str(path), "input": "question", "target": "answer", "scorer": "numeric"}
    return write_variant(tmp_path, benchmark="dataset", metric="seq@k", k=2, model="mock/data-actor",
                         options=options | keys)


def test_a_changed_file_refuses_to_resume_and_a_moved_one_resumes(tmp_path, db):
    path = write_data(tmp_path, "jsonl", data_rows(3, "42"))
    models.register_mock("mock/data-actor", lambda p: "ANSWER: 42")
    engine.run(runspec.load(variant_of(tmp_path, path)), db)
    moved = tmp_path / "elsewhere" / "data.jsonl"
    moved.parent.mkdir()
    moved.write_bytes(path.read_bytes())
    again = engine.run(runspec.load(variant_of(tmp_path, moved)), db)  # same bytes, same run
    assert again.attempts_written == 0
    path.write_text(path.read_text().replace('"answer": "42"', '"answer": "43"', 1))
    with pytest.raises(RunConflict, match=r"different settings \(data_sha256\)"):
        engine.run(runspec.load(variant_of(tmp_path, path)), db)


def test_the_format_mode_says_what_could_not_be_read(tmp_path, db):
    path = write_data(tmp_path, "jsonl", data_rows(1, "42"))
    models.register_mock("mock/data-actor", lambda p: "ANSWER: 41" if "<Feedback 1>" in p else "Not sure.")
    spec = runspec.load(write_variant(
        tmp_path, benchmark="dataset", metric="seq@k", k=3, model="mock/data-actor", feedback_mode="format",
        options={"path": str(path), "input": "question", "target": "answer", "scorer": "numeric"}))
    engine.run(spec, db)
    assert rows(db, "SELECT attempt_index, feedback FROM attempts ORDER BY 1") == [
        (1, "Your previous answer could not be read: no number in the reply."),
        (2, "Your previous answer was not correct."), (3, "Your previous answer was not correct.")]


def fake_hub_cache(root, repo: str, files: dict[str, bytes], commit: str = "a" * 40):
    """A huggingface_hub cache holding one dataset snapshot, laid out as the hub lays it out."""
    folder = root / f"datasets--{repo.replace('/', '--')}"
    (folder / "refs").mkdir(parents=True)
    (folder / "refs" / "main").write_text(commit)
    for name, data in files.items():
        path = folder / "snapshots" / commit / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def parquet_bytes(tmp_path, data):
    path = tmp_path / "tmp.parquet"
    pl.DataFrame(data).write_parquet(path)
    return path.read_bytes()


def hf_options(**keys):
    return {"hf": "acme/arith", "split": "test", "input": "question", "target": "answer", "scorer": "numeric"} | keys


def test_a_hub_dataset_is_read_from_the_cache_shards_in_order(tmp_path, monkeypatch):
    import huggingface_hub.constants

    cache = tmp_path / "hub"
    fake_hub_cache(cache, "acme/arith", {
        "main/test-00000-of-00002.parquet": parquet_bytes(tmp_path, data_rows(2, "1")),
        "main/test-00001-of-00002.parquet": parquet_bytes(tmp_path, data_rows(3, "2")),
        "main/train-00000-of-00001.parquet": parquet_bytes(tmp_path, data_rows(1, "9")),
        "other/test-00000-of-00001.parquet": parquet_bytes(tmp_path, data_rows(1, "8")),
        "README.md": b"# acme/arith"})
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    from benchmarks.dataset import benchmark

    with pytest.raises(ConfigError, match=r"options\.subset: acme/arith has split 'test' in several subsets "
                                          r"\(main, other\)"):
        benchmark.load_tasks(benchmark.Options.model_validate(hf_options()))
    options = benchmark.Options.model_validate(hf_options(subset="main"))
    tasks = benchmark.load_tasks(options)
    assert [(t.task_index, t.answer["target"]) for t in tasks] == [(1, ["1"]), (2, ["1"]), (3, ["2"]),
                                                                    (4, ["2"]), (5, ["2"])]
    assert benchmark.slice_name(options) == "hf-acme__arith-main-test"
    with pytest.raises(ConfigError, match=r"options\.split: no file of split 'validation' of subset 'main'"):
        benchmark.load_tasks(benchmark.Options.model_validate(hf_options(subset="main", split="validation")))


def test_a_hub_dataset_not_in_the_cache_is_one_line_with_the_fetch_command(tmp_path, monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "empty"))
    from benchmarks.dataset import benchmark

    with pytest.raises(ConfigError) as caught:
        benchmark.load_tasks(benchmark.Options.model_validate(hf_options(revision="v2")))
    (issue,) = caught.value.issues
    assert issue.field == "options.hf" and "\n" not in issue.message
    assert ("the dataset acme/arith at revision v2 is not in huggingface_hub's cache" in issue.message
            and "`hf download acme/arith --repo-type dataset --revision v2`" in issue.message)
