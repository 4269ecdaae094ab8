"""The base of the four rubric benchmarks: an LLM verifier, data from a local file or the
hub (its hash in the run's fingerprint), and the template feedback modes they share."""

from __future__ import annotations

import logging
from typing import ClassVar, TypeVar

from benchmarks._common.records import Records
from benchmarks._common.rubric_data import DataFile, DataOptions, HubFile, data_file, records
from seqk.benchmark import AttemptContext, Benchmark, Task, Verdict
from seqk.errors import ConfigError, ConfigIssue

log = logging.getLogger("seqk")

DataOptionsT = TypeVar("DataOptionsT", bound=DataOptions)


class RubricBenchmark(Benchmark[DataOptionsT]):
    """A benchmark graded by an LLM judge against a per-task rubric."""

    verifier: ClassVar[str] = "llm"
    hub: ClassVar[HubFile | None] = None
    """Where the data is downloaded from when `options.data_path` is not given."""
    binary_feedback: ClassVar[str]
    """The `binary` mode's one sentence: only that the attempt failed."""
    # skip_invalid_records decides only whether a file with a bad record loads at all: a
    # record's task_index is its position in the file either way, and the file's hash is in
    # the fingerprint, so turning it on to resume a run mixes nothing.
    identity_exempt_options: ClassVar[frozenset[str]] = frozenset(
        {"data_path", "revision", "skip_invalid_records"})

    def data(self, options: DataOptionsT) -> DataFile:
        """The data file's text and hash (read once per process while it is unchanged)."""
        return data_file(options, self.hub)

    def records(self, options: DataOptionsT) -> Records:
        """The data file's records, under the options' rule for one that does not fit."""
        return records(self.data(options), options)

    def load_tasks(self, options: DataOptionsT) -> list[Task]:
        """The records the options keep (tasks_of), in file order, task_index = the record's
        position in the file (a malformed one stops the load unless skip_invalid_records)."""
        records = self.records(options)
        return checked_tasks(self.name, records, self.tasks_of(records, options))

    def tasks_of(self, records: Records, options: DataOptionsT) -> list[Task]:
        """The tasks of the records that the options keep."""
        raise NotImplementedError

    def data_fingerprint(self, options: DataOptionsT) -> str | None:
        """The sha256 of the data file the tasks were read from."""
        return self.data(options).sha256

    async def feedback(self, task: Task, output: str, verdict: Verdict,
                       ctx: AttemptContext[DataOptionsT]) -> str:
        """`binary`: one sentence; `raw`: the verifier's diagnostic as it is; any other mode
        is the benchmark's critic."""
        if ctx.mode.name == "binary":
            return self.binary_feedback
        if ctx.mode.name == "raw":
            return verdict.raw_eval_output
        return (await ctx.critic.complete(self.critic_prompt(task, output, verdict, ctx.mode.name))).strip()

    def critic_prompt(self, task: Task, output: str, verdict: Verdict, mode: str) -> str:
        """The critic's prompt for an LLM feedback mode."""
        raise KeyError(mode)


def checked_tasks(name: str, records: Records, tasks: list[Task]) -> list[Task]:
    """The loaded tasks, after logging the lines skipped as invalid; no task at all is an
    error naming the file, since a run over nothing measures nothing."""
    skipped = records.skipped
    if skipped:
        shown = ", ".join(str(n) for n in skipped[:20]) + (" ..." if len(skipped) > 20 else "")
        log.warning("%s: skipped %d record(s) of %s that do not fit the schema (%s %s); the "
                    "other records keep their task_index", name, len(skipped), records.source,
                    "line" if len(skipped) == 1 else "lines", shown)
    if not tasks:
        raise ConfigError("options", [ConfigIssue(
            "C08", "options", f"no {name} task in {records.source} matches these options "
                              f"({len(skipped)} record(s) skipped as invalid)")])
    return tasks
