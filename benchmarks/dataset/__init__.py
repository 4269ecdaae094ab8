"""dataset: any question set as a benchmark, from a variant alone. The rows of a local .jsonl,
.json, .csv or .parquet file (or of a Hugging Face dataset in huggingface_hub's cache) become the
tasks, row i task i; a scorer of seqk.verifiers grades them:

    benchmark: dataset
    options:
      path: capitals.jsonl          # or  hf: owner/name  with split (and subset)
      input: question               # a field, or a template: "{question}\\n\\n{choices}"
      target: answer                # a field (a list value: any is right), or a list of fields
      scorer: exact                 # or {numeric: {tolerance: 0.01}}, choice, {python: m:f}, ...

The file's sha256 is the run's data fingerprint: a changed file is new data, and a run made on
the old one refuses to resume on it. See docs/your-own-benchmark.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from benchmarks._common.samples import SampleBenchmark
from benchmarks.dataset import files, hub, rows
from benchmarks.dataset.options import DatasetOptions, default_slice
from seqk.benchmark import Task
from seqk.errors import ConfigError, ConfigIssue


class Dataset(SampleBenchmark[DatasetOptions]):
    """Rows of a data file graded by a scorer the variant names."""

    name: ClassVar[str] = "dataset"
    # The data's hash is in the fingerprint: where the file lies does not change results, and
    # skipping decides only whether a file with a bad row loads (the others keep their index).
    identity_exempt_options: ClassVar[frozenset[str]] = frozenset({"path", "revision", "skip_invalid_records"})

    def scorer_of(self, options: DatasetOptions) -> Any:
        """The variant's `scorer:`."""
        return options.scorer

    def slice_name(self, options: DatasetOptions) -> str:
        """`name`, else the file's name without its suffix (capitals.jsonl: capitals), else
        hf-owner__name[-subset]-split."""
        return default_slice(options)

    def table(self, options: DatasetOptions) -> files.Table:
        """The rows of the data, read once per process while the files are unchanged."""
        return _table(options)

    def data_fingerprint(self, options: DatasetOptions) -> str | None:
        """The sha256 of the data file (of the files' names and hashes, for a sharded split)."""
        return self.table(options).sha256

    def load_tasks(self, options: DatasetOptions) -> list[Task]:
        """Every row as a task, task_index = the row's number in the file."""
        table = self.table(options)
        source = options.path or f"{options.hf} ({options.split})"
        skipped = list(table.skipped)
        found = rows.tasks(table, options, self.scorer_of(options).kind, source,
                           rows.raise_or_skip(skipped, options.skip_invalid_records))
        rows.warn_skipped(source, skipped)
        return found


def _table(options: DatasetOptions) -> files.Table:
    if options.path is not None:
        path = Path(options.path).expanduser()
        if not path.is_file():
            raise ConfigError("options", [ConfigIssue("C08", "options.path", f"no file at {path.resolve()}")])
        paths, names = [path], [options.path]
    else:
        assert options.hf is not None and options.split is not None
        paths = hub.split_files(options.hf, options.split, options.subset, options.revision)
        names = [f"{options.hf}/{p.name}" for p in paths]
    return files.read(paths, names, skip_invalid=options.skip_invalid_records)


benchmark = Dataset()
