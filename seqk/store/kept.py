"""Per-chain outcomes computed once for all the queries of one report (sql/kept.sql).

`seqk report --compare` runs several queries over the same runs that each start from
chain_outcomes_of (the run curves, the per-chain rows the bootstraps and the equal-budget
comparison read, the survival curves); over a million attempts each of those calls groups the
same million rows. Inside `kept_chain_outcomes`, the outcomes are computed once into a temporary
table and a temporary chain_outcomes_of (and chain_facts_of, its columns without the spend)
answers from it: DuckDB looks in the session's temporary catalog first, so the macros of
views.sql use them unchanged. Asked for a run not kept, they fail rather than answer with
missing rows.

Temporary tables and macros are allowed in a read-only session and never written to the
file. A lake's session keeps its views and macros in that same temporary catalog
(seqk/store/lake.py), so there the block computes nothing ahead and the queries run as usual.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from seqk.store import queries
from seqk.store.execute import Connection, transaction


@contextmanager
def kept_chain_outcomes(con: Connection, *, run_ids: Sequence[str]) -> Iterator[None]:
    """Within the block, chain_outcomes_of and chain_facts_of (runs among `run_ids`) on `con`
    read outcomes computed once on entry."""
    if queries.session_chain_outcomes(con):  # a lake's session, or a block already open
        yield
        return
    ids = list(run_ids)
    queries.keep_chain_outcomes(con, run_ids=ids)
    queries.keep_chain_outcomes_for(con, run_ids=ids)
    queries.serve_kept_chain_outcomes(con)
    queries.serve_kept_chain_facts(con)
    try:
        yield
    finally:
        queries.drop_kept_chain_outcomes(con)


def rebuild_kept_chains(con: Connection) -> None:
    """Keep every chain's outcome (the table chain_kept) afresh from the attempts, in one
    transaction: for rows written by SQL rather than through append_attempts (bench/, tests)."""
    with transaction(con):
        queries.forget_all_kept_chains(con)
        queries.keep_all_chains(con)


def kept_chains_differ(con: Connection) -> int:
    """How many chain_kept rows differ from a recomputation from the attempts, both ways."""
    return int(queries.kept_chains_differ(con))
