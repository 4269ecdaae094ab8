"""Per-task outcomes computed once for all the queries of one report (sql/kept.sql).

`seqk report --compare` runs four queries over the same runs that each start from
task_outcomes_of (the run curves, the bootstrap's task types, the frontier and the
equal-budget value pairs); over a million attempts each of those calls groups the same
million rows. Inside `kept_task_outcomes`, the outcomes are computed once into a temporary
table and a temporary task_outcomes_of answers from it: DuckDB looks in the session's
temporary catalog first, so the macros of views.sql use it unchanged. Asked for another
errors_as_failures or for a run not kept, it fails rather than answer with missing rows.

Temporary tables and macros are allowed in a read-only session and never written to the
file. A lake's session keeps its views and macros in that same temporary catalog
(seqk/store/lake.py), so there the block computes nothing ahead and the queries run as usual.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from seqk.store import queries
from seqk.store.execute import Connection


@contextmanager
def kept_task_outcomes(con: Connection, *, errors_as_failures: bool,
                       run_ids: Sequence[str]) -> Iterator[None]:
    """Within the block, task_outcomes_of(errors_as_failures, runs among `run_ids`) on `con`
    reads outcomes computed once on entry."""
    if queries.session_task_outcomes(con):  # a lake's session, or a block already open
        yield
        return
    ids = list(run_ids)
    queries.keep_task_outcomes(con, errors_as_failures=errors_as_failures, run_ids=ids)
    queries.keep_task_outcomes_for(con, errors_as_failures=errors_as_failures, run_ids=ids)
    queries.serve_kept_task_outcomes(con)
    try:
        yield
    finally:
        queries.drop_kept_task_outcomes(con)
