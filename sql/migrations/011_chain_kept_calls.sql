-- Schema 11: chain_kept also keeps each chain's failed calls and its spend at every attempt index
-- with a call (issue 30), so that the viewer's run list and run page read chain_kept, not calls.
-- Its rows are derived data: the table is dropped here and made again by sql/schema.sql, which
-- seqk/store/schema.py runs after the migrations (its CREATE TABLE IF NOT EXISTS make only what
-- is missing), and every chain is kept afresh from the attempts and calls right after that, once
-- views.sql's chain_kept_rows has the new columns (KEPT_SINCE).

DROP TABLE chain_kept;
