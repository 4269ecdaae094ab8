"""Contract v2: options typed by the benchmark's own class, the attempt's context handed to
verify and feedback, answers read back typed, defaults in the base class, the agentic kind,
and task hashes that did not move (so runs stored under the first contract still resume)."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

import pytest
from helpers import context
from pydantic import BaseModel, ConfigDict, ValidationError

from seqk.benchmark import AgenticBenchmark, AttemptContext, Benchmark, NoOptions, Task, Verdict, discovery
from seqk.errors import BenchmarkContractError

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = "tests/benchmarks/fixtures/"
# sha256 over the content hashes of every task, computed with the first contract (commit 6fbd319)
# from the same data: a change here means stored runs of that benchmark would refuse to resume.
PINNED = [
    # quickstart's number questions ask for an ANSWER: line since issue 28 (prompt_version 2):
    # its runs made before are refused, on purpose, rather than graded by two rules.
    ("quickstart", {}, 14, "57e6d689447150eb5093961de3760632c96ef09ad45d33354110d44851541fe0"),
    ("arcagi2", {"split": "evaluation"}, 120, "4ca6779176f952305a336117cb9a8090d780dcc75250f25c649bd6f806295c1d"),
    ("humaneval", {}, 164, "cdf56a389253d3d2c7d3a2be2259e82151a3c6442a59fd68a0b256764029267a"),
    ("healthbench", {"data_path": FIXTURES + "healthbench.jsonl"}, 2,
     "d874854e56374c0b64b4b161466a13a84149b9b26781f4be1ea084110ffbf0d8"),
    ("healthbench", {"data_path": FIXTURES + "healthbench_official.jsonl", "themes": [],
                     "success_threshold": 0.5, "score_formula": "seq_k"}, 3,
     "ed1321b1a6de21e68f40ca7623552315872eaf5f0d61816f9268e07b0c25f84b"),
    ("advancedif", {"data_path": FIXTURES + "advancedif.csv"}, 3,
     "0ef594ba5a0f1b4ae3188f2c0bed30a4537a20cc1a1ca30a951639b3293b7c11"),
    ("clbench", {"data_path": FIXTURES + "clbench.jsonl"}, 2,
     "3d2af12ffd84f0a0e8dad82fc0a8e1c0e63030665a9508b6b82f7b458ded778a"),
    ("researchrubrics", {"data_path": FIXTURES + "researchrubrics.jsonl"}, 3,
     "90921709d66ab0f2c21a04f1bf2cdcdade8c080a82a37296b163e6a517ed8df0"),
    ("terminalbench", {"local_tasks": "benchmarks/terminalbench/local_tasks"}, 2,
     "70dd3fe29532658f51810a9747b5dc29374e87bd07647564d26a217c47146f2f"),
    ("terminalbench", {}, 24, "d1b76b74b8f0d38d730e65b6fc31a5d2ca557786f78731f8b961f228fdfde06a"),
]


@pytest.mark.parametrize("name, options, n, digest", PINNED, ids=lambda v: v if isinstance(v, str) else None)
def test_task_hashes_are_those_of_the_first_contract(name, options, n, digest, monkeypatch):
    monkeypatch.chdir(ROOT)  # the fixtures and local tasks are named from the repository root
    bench = discovery.get(name)
    tasks = bench.load_tasks(bench.Options.model_validate(options))
    assert len(tasks) == n
    assert hashlib.sha256("".join(t.content_hash for t in tasks).encode()).hexdigest() == digest


def test_no_run_setting_lands_in_the_tasks_table():
    humaneval = discovery.get("humaneval")
    tasks = humaneval.load_tasks(humaneval.Options(timeout_s=9.0, sandbox="none"))
    assert all(set(t.meta) == {"entry_point"} for t in tasks)


class WordOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    word: str = "hello"
    """The word every task asks for."""


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    word: str
    """The expected word."""


class Words(Benchmark[WordOptions]):
    name = "words"

    def load_tasks(self, options: WordOptions) -> list[Task]:
        return [Task(1, "w1", f"Say {options.word}.", answer=Answer(word=options.word))]

    async def verify(self, task: Task, output: str, ctx: AttemptContext[WordOptions]) -> Verdict:
        ok = output == task.answer_as(Answer).word and ctx.options.word == task.answer_as(Answer).word
        return Verdict(ok, float(ok))


def test_the_options_type_comes_from_the_generic_and_the_rest_from_the_base():
    bench = Words()
    assert bench.Options is WordOptions
    assert (bench.verifier, bench.prompt_version, bench.default_feedback_mode) == ("deterministic", "1", "binary")
    assert [m.name for m in bench.feedback_modes] == ["binary"] and not bench.llm_critic_modes
    assert bench.slice_name(WordOptions()) == "words" and bench.data_fingerprint(WordOptions()) is None
    (task,) = bench.load_tasks(WordOptions(word="hi"))
    ctx = context(bench, WordOptions(word="hi"))
    assert asyncio.run(bench.verify(task, "hi", ctx)).success
    assert asyncio.run(bench.feedback(task, "ho", Verdict(False, 0.0), ctx)) == Benchmark.binary_feedback


def test_a_declared_options_class_must_agree_with_the_generic():
    with pytest.raises(TypeError, match="Options is NoOptions but the class is declared Benchmark\\[WordOptions\\]"):
        class Clash(Benchmark[WordOptions]):
            name = "clash"
            Options = NoOptions


def test_the_default_feedback_mode_is_the_first_declared():
    from seqk.benchmark import FeedbackMode

    class Two(Words):
        feedback_modes = (FeedbackMode("hint", "a hint"), FeedbackMode("binary", "wrong"))

    assert Two.default_feedback_mode == "hint"
    with pytest.raises(NotImplementedError, match="declares feedback mode 'hint'"):
        asyncio.run(Two().feedback(Task(1, "w", "p"), "", Verdict(False, 0.0), context(Two())))


def test_answer_as_reads_plain_data_or_returns_the_model_itself():
    model = Answer(word="x")
    assert Task(1, "a", "p", answer=model).answer_as(Answer) is model
    assert Task(1, "a", "p", answer={"word": "y"}).answer_as(Answer) == Answer(word="y")
    assert Task(1, "a", "p", answer=[[[1, 2]]]).answer_as(list[list[list[int]]]) == [[[1, 2]]]
    with pytest.raises(ValidationError):
        Task(1, "a", "p", answer={"words": "y"}).answer_as(Answer)
    # A model answer hashes as its JSON data does: moving to a model never moves a hash.
    assert Task(1, "a", "p", answer=model).content_hash == Task(1, "a", "p", answer={"word": "x"}).content_hash
    assert Task(1, "a", "p", answer={"word": "x"}, hash_extra={"rule": 1}).content_hash == \
        Task(1, "a", "p", answer={"word": "x", "rule": 1}).content_hash


def test_judge_and_critic_prompts_are_recorded_with_the_run_options():
    class Asks(Words):
        verifier = "llm"

        async def verify(self, task, output, ctx):
            await ctx.judge.complete(f"Is {output!r} the word {ctx.options.word}?")
            raise AssertionError("the recorder never answers")

    prompts = asyncio.run(Asks().judge_prompts(Task(1, "w", "p"), WordOptions(word="hey")))
    assert prompts == ["Is '' the word hey?"]
    assert asyncio.run(Words().judge_prompts(Task(1, "w", "p"), WordOptions())) == []


def test_an_agentic_benchmark_is_a_kind_and_a_flag_is_refused(monkeypatch):
    class Agent(AgenticBenchmark[WordOptions]):
        name = "agent"

        def load_tasks(self, options):
            return []

        async def run_attempt(self, task, prompt, ctx):
            raise AssertionError

    class Flagged(Words):
        name = "flagged"

        async def run_attempt(self, task, prompt, ctx):
            raise AssertionError

    registry = discovery.registry()
    monkeypatch.setitem(registry, "agent", Agent())
    monkeypatch.setitem(registry, "flagged", Flagged())
    assert isinstance(discovery.get("agent"), AgenticBenchmark)
    with pytest.raises(TypeError, match="agent is agentic"):
        asyncio.run(Agent().verify(Task(1, "w", "p"), "", context(Agent())))
    with pytest.raises(BenchmarkContractError, match="defines run_attempt but is not an AgenticBenchmark"):
        discovery.get("flagged")


def test_every_shipped_benchmark_follows_the_contract():
    from seqk.benchmark.discovery import contract_problem

    shipped = {name: bench for name, bench in discovery.registry().items() if not name.startswith("toy")}
    assert {name: contract_problem(bench) for name, bench in shipped.items()} == dict.fromkeys(shipped)
    assert isinstance(shipped["terminalbench"], AgenticBenchmark)
    assert not any(isinstance(b, AgenticBenchmark) for n, b in shipped.items() if n != "terminalbench")


def test_every_benchmark_folder_has_a_readme_naming_its_modes_and_leaks():
    for name, bench in discovery.registry().items():
        if name.startswith("toy"):
            continue
        text = (ROOT / "benchmarks" / name / "README.md").read_text()
        assert text.startswith(f"# {name}\n")
        for heading in ("**Data**", "**Success**", "**Feedback modes**"):
            assert heading in text, (name, heading)
        for mode in bench.feedback_modes:
            assert f"`{mode.name}`" in text, (name, mode.name)
        if any(mode.shows_grading_info for mode in bench.feedback_modes):
            assert "leak" in text.lower(), name
