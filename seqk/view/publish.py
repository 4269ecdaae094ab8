"""`seqk view --bundle DIR`: the viewer's pages pre-rendered as a static site that opens from
file:// and can be published: relative links, no script, no network.

A large database would make a large site, so a bundle holds the chosen runs (every run by
default) and the first `max_tasks` tasks of each, and its pages say so.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from seqk import store
from seqk.errors import BadInput
from seqk.store import queries
from seqk.view import compare_publish, pages, render, story


@dataclass(frozen=True)
class BundleResult:
    """What a bundle holds."""

    folder: Path
    n_runs: int
    n_runs_in_db: int
    n_pages: int
    max_tasks: int

    def describe(self) -> str:
        """One line for the command line."""
        return (f"wrote {self.n_pages} pages under {self.folder} ({self.n_runs} of {self.n_runs_in_db} runs, "
                f"at most {self.max_tasks} tasks each); open {self.folder / 'index.html'}")


@dataclass(frozen=True)
class BundleUrls(render.Urls):
    """Relative links that only point at pages the bundle holds."""

    upto: tuple[tuple[str, int], ...] = ()
    """(run_id, last task index bundled) of each bundled run."""
    pairs: tuple[tuple[str, str], ...] = ()
    """The pairs of runs whose compare pages the bundle holds."""
    compare_tasks: frozenset[tuple[str, str, int]] = frozenset()
    """(a, b, task index) of each side-by-side story the bundle holds."""

    def has_run(self, run_id: str | None) -> bool:
        return any(run_id == r for r, _ in self.upto)

    def has_task(self, run_id: str | None, task_index: int) -> bool:
        return any(run_id == r and task_index <= last for r, last in self.upto)

    def has_compare(self, run_a: str, run_b: str) -> bool:
        return (run_a, run_b) in self.pairs

    def has_compare_task(self, run_a: str, run_b: str, task_index: int) -> bool:
        return (run_a, run_b, task_index) in self.compare_tasks


def _file(folder: Path, run_id: str, name: str) -> Path:
    segments = run_id.split("/")
    if any(s in ("", ".", "..") for s in segments):
        raise BadInput(f"run id {run_id!r} cannot be a folder of the bundle (an empty, '.' or '..' slot)")
    return folder.joinpath("runs", *segments, name)


def _write(folder: Path, relative: str, html: str) -> None:
    path = folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")


def bundle(folder: Path, db: store.DbLike = None, runs: tuple[str, ...] | list[str] = (),
           max_tasks: int = 200) -> BundleResult:
    """Write the run list, each chosen run's pages (every filter, every page of its task
    table) and the story of its first `max_tasks` tasks under `folder`."""
    if max_tasks < 1:
        raise BadInput("--max-tasks must be at least 1")
    if folder.exists() and not folder.is_dir():
        raise BadInput(f"--bundle {folder} is a file; it names a folder to write the site into")
    db = store.open(db)
    with db.connect(read_only=True, wait_s=pages.WAIT_S) as con:
        chosen = store.resolve_run_ids(con, runs) if runs else [r["run_id"] for r in queries.list_runs(con)]
    listing = pages.runs_page(db)
    kept = frozenset(chosen)
    groups = []
    for g in listing.groups:
        pass_run = g.pass_run if g.pass_run and g.pass_run.run_id in kept else None
        seq_runs = [r for r in g.seq_runs if r.run_id in kept]
        if pass_run or seq_runs:
            groups.append(pages.RunGroup(pass_run, seq_runs))
    note = (f"A snapshot: {len(kept)} of {listing.n_runs} runs, and the first {max_tasks} tasks of each "
            f"(seqk view --bundle --max-tasks N bundles more; seqk view serves everything).")
    folder.mkdir(parents=True, exist_ok=True)
    static = folder / "static"
    static.mkdir(exist_ok=True)
    shutil.copyfile(str(resources.files("seqk.view") / "static" / "view.css"), static / "view.css")
    n = 0
    indices = {run_id: sorted(_task_indices(db, run_id))[:max_tasks] for run_id in chosen}
    upto = tuple((run_id, found[-1] if found else 0) for run_id, found in indices.items())
    pairs, n_pairs = compare_publish.pairs_of(db, chosen)
    if n_pairs > len(pairs):
        note += f" Compare pages: the first {len(pairs)} of {n_pairs} pairs of runs of one slice."
    compared, compare_tasks = compare_publish.pages_of(db, pairs, lambda run_id: dict(upto)[run_id])

    def urls(here: str) -> BundleUrls:
        return BundleUrls(here=here, upto=upto, pairs=tuple(pairs), compare_tasks=frozenset(compare_tasks))

    _write(folder, "index.html", render.render_runs(
        pages.RunsPage(listing.db, groups, len(kept),
                       {k: v for k, v in listing.budgets.items() if k in kept},
                       [s for s in listing.studies if {s.seq_run_id, s.partner_run_id} & kept],
                       {k: v for k, v in listing.verdicts.items() if k in kept}),
        urls("index.html"), note=note))
    n += 1
    for run_id in chosen:
        for name in pages.FILTERS:
            number, n_pages = 1, 1
            while number <= n_pages:
                page = pages.run_page(run_id, db, filter=name, page=number, upto=dict(upto)[run_id],
                                      known=listing.verdicts)
                n_pages = page.n_pages
                file = "index.html" if (name, number) == ("all", 1) else f"{name}-{number}.html"
                relative = _file(folder, run_id, file).relative_to(folder).as_posix()
                _write(folder, relative, render.render_run(page, urls(relative), note=note))
                n += 1
                number += 1
        for index in indices[run_id]:
            relative = _file(folder, run_id, f"tasks/{index}.html").relative_to(folder).as_posix()
            _write(folder, relative, render.render_task(story.task_page(run_id, index, db), urls(relative)))
            n += 1
    n += compare_publish.write(folder, db, compared, compare_tasks, urls, note, _write)
    return BundleResult(folder, len(kept), listing.n_runs, n, max_tasks)


def _task_indices(db: store.Database, run_id: str) -> dict[int, Any]:
    with db.connect(read_only=True, wait_s=pages.WAIT_S) as con:
        return store.task_identities(con, run_id)
