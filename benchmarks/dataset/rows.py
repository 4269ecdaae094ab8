"""Rows to tasks: the id, the prompt (the input field or a template over fields, the system text
before it, the lettered choices), and the grading data (`Reference`: targets, choices, rubric).

A field the options name that the file does not have is a ConfigError naming the option and
listing the fields the file has; a row whose field is missing, empty or of the wrong kind is a
DataFileError naming file, line and field (skipped and listed under `skip_invalid_records`,
the other rows keeping their numbers).
"""

from __future__ import annotations

import difflib
import json
import logging
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchmarks._common.samples import reference_answer
from benchmarks.dataset.files import Row, Table
from benchmarks.dataset.options import DatasetOptions
from seqk.benchmark import Task
from seqk.errors import ConfigError, ConfigIssue, DataFileError
from seqk.verifiers.numbers import parse_target_number
from seqk.verifiers.patterns import choice_letters, choice_lines, choice_prompt, letter, target_positions

log = logging.getLogger("seqk")

_SPECIAL = {"choices", "letters", "target"}
"""Template fields seqk fills in itself: the lettered choices, their letters, the target."""


class Reject(Exception):
    """A row does not fit: the field and what was expected."""

    def __init__(self, field: str, expected: str):
        super().__init__(f"{field}: expected {expected}")
        self.field, self.expected = field, expected


def text_of(value: Any, field: str) -> str:
    """A field's value as prompt text; None or a missing field is a Reject."""
    if isinstance(value, str):
        return value
    if value is None:
        raise Reject(field, "a value (it is null)")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, ensure_ascii=False)


@dataclass(frozen=True)
class Template:
    """`input` or `system`: one field's value, or a text with {field} holes."""

    option: str
    parts: tuple[tuple[str, str | None], ...]
    """(literal text, field or None) in order."""

    @classmethod
    def of(cls, option: str, text: str) -> Template:
        if "{" not in text and "}" not in text:
            return cls(option, (("", text),))
        try:
            parsed = list(string.Formatter().parse(text))
        except ValueError as exc:
            raise _issue(option, f"not a template ({exc}); write a literal brace as {{{{ or }}}}") from None
        parts = []
        for literal, name, spec, conversion in parsed:
            if name is not None and (not name or spec or conversion):
                raise _issue(option, f"{{{name}{'!' + conversion if conversion else ''}"
                                     f"{':' + spec if spec else ''}}} is not a field name; write {{field}}")
            parts.append((literal, name))
        return cls(option, tuple(parts))

    @property
    def fields(self) -> list[str]:
        return [name for _, name in self.parts if name is not None]

    def render(self, row: dict[str, Any], special: dict[str, str]) -> str:
        out = []
        for literal, name in self.parts:
            out.append(literal)
            if name is not None:
                out.append(special[name] if name in special else text_of(_get(row, name), name))
        return "".join(out)


_ABSENT = object()


def _get(row: dict[str, Any], name: str) -> Any:
    value = row.get(name, _ABSENT)
    if value is _ABSENT:
        fields = ", ".join(map(str, row)) or "none"
        raise Reject(name, f"a field {name!r} (this row has: {fields})")
    return value


def _issue(option: str, message: str) -> ConfigError:
    return ConfigError("options", [ConfigIssue("C08", f"options.{option}", message)])


def _closest(name: str, columns: list[str]) -> str:
    near = difflib.get_close_matches(name, columns, n=1)
    return f" (did you mean {near[0]!r}?)" if near else ""


def check_fields(options: DatasetOptions, table: Table, wanted: dict[str, list[str]]) -> None:
    """Every field an option names is one the file has: its header or schema, else its first row."""
    if table.columns is not None:
        columns, what = table.columns, "its columns"
    elif table.rows:
        columns, what = list(table.rows[0].value), f"the fields of its first row ({table.rows[0].where})"
    else:
        return
    for option, names in wanted.items():
        for name in names:
            if name not in columns:
                source = options.path or options.hf
                raise _issue(option, f"no field {name!r} in {source}; {what}: {', '.join(map(str, columns))}"
                                     f"{_closest(name, [str(c) for c in columns])}")


def targets_of_row(row: dict[str, Any], fields: str | list[str]) -> list[str]:
    """The row's right answers: one field's value (a list: each item), or each field's value."""
    values = [_get(row, f) for f in ([fields] if isinstance(fields, str) else fields)]
    name = fields if isinstance(fields, str) else ", ".join(fields)
    flat = [item for v in values for item in (v if isinstance(v, list) else [v])]
    texts = [text_of(v, name) for v in flat]
    if not texts or any(not t.strip() for t in texts):
        raise Reject(name, "a target (the value is empty)")
    return texts


def choices_of_row(row: dict[str, Any], fields: str | list[str]) -> list[str]:
    """The row's choices: one field holding a list (a CSV cell: a JSON array), or a field each."""
    if isinstance(fields, list):
        return [text_of(_get(row, f), f) for f in fields]
    value = _get(row, fields)
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            value = json.loads(value)
        except ValueError:
            raise Reject(fields, "a list of choices (the cell is not a JSON array)") from None
    if not isinstance(value, list) or len(value) < 2:
        raise Reject(fields, "a list of at least two choices")
    return [text_of(v, fields) for v in value]


def choice_target(targets: list[str], raw: list[Any], choices: list[str], index_from: int | None,
                  field: str) -> list[str]:
    """The targets of a choice row as letters: letters as they are, the text of a choice as its
    letter, a number as an index counted from `index_from` (refused when unset)."""
    letters = []
    for text, value in zip(targets, raw, strict=True):
        number = isinstance(value, int) and not isinstance(value, bool) or text.strip().isdigit()
        if number and index_from is not None:
            index = int(text) - index_from
            if not 0 <= index < len(choices):
                raise Reject(field, f"an index of one of the {len(choices)} choices counted from "
                                    f"{index_from} (it is {text})")
            letters.append(letter(index))
        elif text in choices:
            letters.append(letter(choices.index(text)))
        elif number:
            raise Reject(field, f"a letter, or the text of a choice (it is the number {text}: set "
                                f"options.choice_index_from to 0 or 1 to read it as an index)")
        else:
            try:
                tokens = text.replace(",", " ").split()
                if not tokens or not all(len(t) == 1 or t.isupper() for t in tokens):
                    raise ValueError(text)  # "Bad" is no list of letters, though B, a and d are
                letters.append(",".join(letter(p) for p in target_positions(text.strip(), len(choices))))
            except ValueError:
                raise Reject(field, f"a letter {choice_letters(len(choices))[0]}-"
                                    f"{letter(len(choices) - 1)}, or the text of a choice (it is {text!r})") from None
    return letters


@dataclass
class Mapper:
    """How this variant's options turn a row into a task."""

    options: DatasetOptions
    kind: str
    """The scorer's name."""

    def __post_init__(self) -> None:
        o = self.options
        self.input = Template.of("input", o.input)
        self.system = Template.of("system", o.system) if o.system else None
        rubric = getattr(o.scorer, "text", None)
        self.rubric_text = Template.of("scorer.llm_rubric.text", rubric) if rubric else None
        self.rubric_column: str | None = getattr(o.scorer, "column", None)
        self.multiple = getattr(o.scorer, "multiple", None) is True
        # The common case, one field each for input and target, takes a short path: a file of
        # 100,000 rows is read at every run's start.
        plain = self.input.parts[0][1] if len(self.input.parts) == 1 and not self.input.parts[0][0] else None
        self.plain_input = plain if o.choices is None and plain not in _SPECIAL else None
        self.plain_target = o.target if isinstance(o.target, str) else None
        self.ask_choices = "choices" not in self.input.fields
        self.specials = bool(o.choices is not None or self.rubric_text is not None or "target" in (
            self.input.fields + (self.system.fields if self.system else [])))
        self.metadata_of = (lambda value: {k: v for k, v in value.items() if k not in _used(o)}) \
            if self.kind == "python" else (lambda value: None)
        self.plain = bool(self.plain_input and self.plain_target and not self.specials and self.system is None
                          and self.rubric_column is None and self.kind not in ("choice", "python"))
        """One field the prompt, one the target, nothing else to fill in: `plain_task` applies."""

    def wanted(self) -> dict[str, list[str]]:
        """The fields each option names, for `check_fields`."""
        o = self.options
        found = {"id": [o.id] if o.id else [], "input": self.input.fields,
                 "target": [o.target] if isinstance(o.target, str) else list(o.target),
                 "system": self.system.fields if self.system else [],
                 "choices": ([o.choices] if isinstance(o.choices, str) else list(o.choices or [])),
                 "scorer.llm_rubric.column": [self.rubric_column] if self.rubric_column else [],
                 "scorer.llm_rubric.text": self.rubric_text.fields if self.rubric_text else []}
        special = _SPECIAL if o.choices is not None else {"target"}
        for option in ("input", "system", "scorer.llm_rubric.text"):
            found[option] = [f for f in found[option] if f not in special]
        return found

    def task(self, row: Row) -> Task:
        o, value, kind = self.options, row.value, self.kind
        single = value.get(self.plain_target, _ABSENT) if self.plain_target else _ABSENT
        kind_of = type(single)
        if kind_of is str and single.strip():
            targets = [single]
        elif kind_of is int or kind_of is float:
            targets = [str(single)]
        else:
            targets = targets_of_row(value, o.target)
        choices = choices_of_row(value, o.choices) if o.choices is not None else None
        special: dict[str, str] = {}
        if self.specials:
            special["target"] = " or ".join(targets)
            if choices is not None:
                special |= {"choices": choice_lines(choices), "letters": choice_letters(len(choices))}
        text = value.get(self.plain_input, _ABSENT) if self.plain_input else _ABSENT
        prompt = text if type(text) is str else self.input.render(value, special)
        if choices is not None and self.ask_choices:
            prompt = choice_prompt(prompt, choices, multiple=self.multiple)
        if self.system is not None:
            prompt = f"{self.system.render(value, special)}\n\n{prompt}"
        if not prompt.strip():
            raise Reject("input", "a prompt (it is empty)")
        if kind == "numeric":
            for t in targets:
                if parse_target_number(t) is None:
                    raise Reject(_name(o.target), f"a number (it is {t!r})")
        elif kind == "choice":
            assert choices is not None
            raw = [_get(value, o.target)] if isinstance(o.target, str) else [_get(value, f) for f in o.target]
            raw = [x for v in raw for x in (v if isinstance(v, list) else [v])]
            targets = choice_target(targets, raw, choices, o.choice_index_from, _name(o.target))
        rubric = self.rubric(value, special) if self.rubric_column or self.rubric_text else None
        if o.id:
            given = value.get(o.id, _ABSENT)
            task_id = (given if type(given) is str else text_of(_get(value, o.id), o.id)).strip()
            if not task_id:
                raise Reject(o.id, "an id (it is empty)")
        else:
            task_id = str(row.position)
        return Task(row.position, task_id, prompt, reference_answer(targets, choices, rubric, self.metadata_of(value)),
                    {"line": row.line} if row.line is not None else {"row": row.position})

    def plain_task(self, row: Row) -> Task:
        """`task(row)` for a `plain` mapper, without its templates, choices and rubric, when the
        row's prompt and id are non-empty text and its target a non-empty text or a number;
        `task` makes any other row's task, or says what is wrong with it."""
        value, id_field = row.value, self.options.id
        prompt = value.get(self.plain_input, _ABSENT)
        target = value.get(self.plain_target, _ABSENT)
        task_id = value.get(id_field, _ABSENT) if id_field else str(row.position)
        kind_of = type(target)
        if kind_of is int or kind_of is float:
            target = str(target)  # a number's text always parses as one
        elif kind_of is not str or not target.strip() or (
                self.kind == "numeric" and parse_target_number(target) is None):
            return self.task(row)
        if type(prompt) is not str or not prompt.strip() or type(task_id) is not str:
            return self.task(row)
        task_id = task_id.strip()
        if not task_id:
            return self.task(row)
        return Task(row.position, task_id, prompt, reference_answer([target]),
                    {"line": row.line} if row.line is not None else {"row": row.position})

    def rubric(self, value: dict[str, Any], special: dict[str, str]) -> Any:
        """The row's rubric: its rubric field, or the fixed text with its fields filled in."""
        if self.rubric_column:
            rubric = _get(value, self.rubric_column)
            if not (isinstance(rubric, str) and rubric.strip()) and not (
                    isinstance(rubric, list) and rubric and all(isinstance(c, str) for c in rubric)):
                raise Reject(self.rubric_column, "a rubric: a text, or a list of criteria")
            return rubric
        assert self.rubric_text is not None
        return self.rubric_text.render(value, special)


def _name(fields: str | list[str]) -> str:
    return fields if isinstance(fields, str) else ", ".join(fields)


def _used(o: DatasetOptions) -> set[str]:
    fields = {o.id, o.input} | ({o.target} if isinstance(o.target, str) else set(o.target))
    return fields | ({o.choices} if isinstance(o.choices, str) else set(o.choices or []))


def tasks(table: Table, options: DatasetOptions, kind: str, source: str,
          reject: Callable[[Row, Reject], None]) -> list[Task]:
    """Every row's task, in file order; a row that does not fit goes to `reject`."""
    mapper = Mapper(options, kind)
    check_fields(options, table, mapper.wanted())
    out: list[Task] = []
    seen: dict[str, Row] = {}
    make = mapper.plain_task if mapper.plain else mapper.task
    for row in table.rows:
        try:
            task = make(row)
            if task.task_id in seen:
                raise Reject(options.id or "id", f"a unique id ({task.task_id!r} is also "
                                                 f"{seen[task.task_id].where}'s)")
        except Reject as bad:
            reject(row, bad)
            continue
        seen[task.task_id] = row
        out.append(task)
    if not out:
        raise ConfigError("options", [ConfigIssue("C08", "options", f"no row of {source} is a task "
                                                                  f"({len(table.skipped)} skipped as invalid)")])
    return out


def raise_or_skip(skipped: list[str], skip_invalid: bool) -> Callable[[Row, Reject], None]:
    """What to do with a row that does not fit: stop with its DataFileError, or note it and go on."""
    def reject(row: Row, bad: Reject) -> None:
        if skip_invalid:
            skipped.append(row.where)
            return
        raise DataFileError(f"{row.where}: {bad.field}: expected {bad.expected}; fix the row, or set "
                            f"options.skip_invalid_records: true to skip it (the other rows keep their task_index)")
    return reject


def warn_skipped(source: str, skipped: list[str]) -> None:
    """One warning listing where the rows skipped as invalid were."""
    if skipped:
        shown = ", ".join(skipped[:20]) + (" ..." if len(skipped) > 20 else "")
        log.warning("dataset: skipped %d row(s) of %s that cannot be read or do not fit (%s); the other "
                    "rows keep their task_index", len(skipped), source, shown)
