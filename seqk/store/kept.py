"""Each chain's outcome kept as its attempts are written (the table chain_kept, sql/kept.sql).

seqk.store.writes.append_attempts keeps the chains it writes to, in the same transaction; a
migration keeps every chain of a store from before the table. Rows written to attempts with SQL
(bench/make_synthetic_db.py, tests) are kept by rebuilding.
"""

from __future__ import annotations

from seqk.store import queries
from seqk.store.execute import Connection, transaction


def rebuild_kept_chains(con: Connection) -> None:
    """Keep every chain's outcome (the table chain_kept) afresh from the attempts, in one
    transaction: for rows written by SQL rather than through append_attempts (bench/, tests)."""
    with transaction(con):
        queries.forget_all_kept_chains(con)
        queries.keep_all_chains(con)


def kept_chains_differ(con: Connection) -> int:
    """How many chain_kept rows differ from a recomputation from the attempts, both ways."""
    return int(queries.kept_chains_differ(con))
