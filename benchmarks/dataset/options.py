"""What a `benchmark: dataset` variant's `options:` say: where the rows are, which fields are the
id, the input, the target and the choices, and which scorer of seqk.verifiers grades."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from seqk.verifiers import Scorer


class DatasetOptions(BaseModel):
    """A data set and how to grade it."""

    model_config = ConfigDict(extra="forbid")

    path: str | None = None
    """A local .jsonl, .json, .csv or .parquet file (relative to the working directory)."""
    hf: str | None = Field(None, pattern=r"^[\w.-]+/[\w.-]+$")
    """A Hugging Face dataset, owner/name, read from huggingface_hub's local cache only."""
    split: str | None = None
    """The split of an `hf` dataset (train, validation, test...)."""
    subset: str | None = None
    """The subset (configuration) of an `hf` dataset that has several."""
    revision: str | None = None
    """A commit or branch of an `hf` dataset in the cache (default: the cached main)."""
    name: str | None = Field(None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    """The slice's name in run ids (default: the file's name without its suffix, or hf-owner__name)."""
    id: str | None = None
    """The field holding each row's id (default: the row's number)."""
    input: str = "input"
    """The field the actor is asked, or a template over fields: "{question}\\n\\nChoices:\\n{choices}"."""
    target: str | list[str] = "target"
    """The field holding the right answer (a list value: any of them is right), or a list of fields."""
    system: str | None = None
    """Text (a template over fields, like `input`) that opens every prompt; seqk sends one message."""
    choices: str | list[str] | None = None
    """The field holding a row's choices as a list, or a list of fields, one choice each. In a
    template, {choices} is them lettered "A) ...", {letters} "A,B,C,D"; without {choices} the
    prompt is inspect's multiple-choice wording."""
    choice_index_from: Literal[0, 1] | None = None
    """A numeric target of a choice row is an index counted from this (0: MMLU's answer field);
    unset, a number is refused rather than guessed."""
    scorer: Scorer
    """The seqk.verifiers scorer: exact, includes, match, regex, answer, numeric, choice,
    json_field, f1, llm_rubric or python, alone or with its parameters."""
    skip_invalid_records: bool = False
    """Skip a row that cannot be read or does not fit (a warning lists where) instead of stopping
    with an error naming it; the other rows keep their task_index."""

    @model_validator(mode="after")
    def _one_source(self) -> DatasetOptions:
        if (self.path is None) == (self.hf is None):
            raise ValueError("give the data as `path` (a local file) or `hf` (owner/name), exactly one")
        if self.hf is None and any(v is not None for v in (self.split, self.subset, self.revision)):
            raise ValueError("split, subset and revision belong to an `hf` dataset; a local `path` has none")
        if self.hf is not None and self.split is None:
            raise ValueError("an `hf` dataset needs its `split` (train, validation, test...)")
        if self.path is not None and not self.path.lower().endswith((".jsonl", ".json", ".csv", ".parquet")):
            raise ValueError(f"path {self.path!r}: expected a .jsonl, .json, .csv or .parquet file")
        if getattr(self.scorer, "kind", None) == "choice" and self.choices is None:
            raise ValueError("the choice scorer needs `choices` (the field or fields holding them)")
        return self


def default_slice(options: DatasetOptions) -> str:
    """The slice name when `name` is not given: the file's stem, or hf-owner__name[-subset]-split."""
    if options.name:
        return options.name
    if options.path is not None:
        stem = re.sub(r"[^A-Za-z0-9._-]+", "-", options.path.replace("\\", "/").rsplit("/", 1)[-1])
        return stem.rsplit(".", 1)[0].strip("-.") or "dataset"
    assert options.hf is not None
    parts = [options.hf.replace("/", "__"), options.subset, options.split]
    return "hf-" + "-".join(p for p in parts if p)
