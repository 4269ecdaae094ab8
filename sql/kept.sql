-- One report's per-chain outcomes, computed once and served to every query of the report
-- (seqk/store/kept.py). A report's queries (run_curves, chain_rows, ...) each start from
-- chain_outcomes_of (or chain_facts_of) for the same runs: over a million attempts each call is
-- ~0.5 s of the same grouping. These tables and macros live in the session's temporary catalog
-- (allowed in a read-only session), are never written to the file, and end with the connection,
-- or sooner with drop_kept_chain_outcomes.

-- name: keep_chain_outcomes(run_ids) -> none
-- Nothing: chain_outcomes_of for the given runs, kept in the temporary table kept_chain_outcomes.
CREATE OR REPLACE TEMP TABLE kept_chain_outcomes AS
SELECT * FROM chain_outcomes_of(run_ids := $run_ids::VARCHAR[]);

-- name: keep_chain_outcomes_for(run_ids) -> none
-- Nothing: which runs kept_chain_outcomes holds, for the macros' check.
CREATE OR REPLACE TEMP TABLE kept_chain_outcomes_for AS
SELECT $run_ids::VARCHAR[] AS kept_run_ids;

-- name: serve_kept_chain_outcomes() -> none
-- Nothing: a temporary chain_outcomes_of, which DuckDB resolves before the database's own (the
-- temporary catalog comes first), also where views.sql's macros call it, answering from
-- kept_chain_outcomes. It fails (error) when asked for a run not kept, rather than answer with
-- missing rows. run_no is numbered again among the runs asked for, as current_attempts_of
-- numbers them, since the views join on it.
CREATE OR REPLACE TEMP MACRO chain_outcomes_of(run_ids := NULL) AS TABLE
WITH numbered AS (
    SELECT run_id, row_number() OVER (ORDER BY run_id) AS run_no
    FROM runs
    WHERE run_ids IS NULL OR list_contains(run_ids, run_id)
),
-- one row, checked once
kept AS (
    SELECT CASE WHEN list_has_all(k.kept_run_ids, (SELECT coalesce(list(run_id), []) FROM numbered))
                THEN true
                ELSE error('chain_outcomes_of: asked for outcomes this report did not keep') END AS ok
    FROM temp.main.kept_chain_outcomes_for k
)
SELECT o.* REPLACE (n.run_no AS run_no)
FROM temp.main.kept_chain_outcomes o
JOIN numbered n USING (run_id)
WHERE (SELECT ok FROM kept);

-- name: serve_kept_chain_facts() -> none
-- Nothing: a temporary chain_facts_of answering from the kept chain_outcomes_of (its columns but
-- the spend), so that task_outcomes_of and the survival macros read the kept rows too.
CREATE OR REPLACE TEMP MACRO chain_facts_of(run_ids := NULL) AS TABLE
SELECT * EXCLUDE (cost_usd, tokens, valid_cost_usd, valid_tokens, priced)
FROM temp.main.chain_outcomes_of(run_ids := run_ids);

-- name: drop_kept_chain_outcomes() -> none
-- Nothing: the database's own chain_outcomes_of and chain_facts_of answer again; the kept tables
-- are dropped.
DROP MACRO TABLE IF EXISTS temp.main.chain_facts_of;
DROP MACRO TABLE IF EXISTS temp.main.chain_outcomes_of;
DROP TABLE IF EXISTS temp.main.kept_chain_outcomes;
DROP TABLE IF EXISTS temp.main.kept_chain_outcomes_for;

-- name: session_chain_outcomes() -> scalar
-- How many chain_outcomes_of macros the session's temporary catalog holds: 1 in a lake's
-- session, whose views and macros all live there, or while a report keeps its outcomes.
SELECT count(*) FROM duckdb_functions()
WHERE function_name = 'chain_outcomes_of' AND database_name = 'temp';

-- The table chain_kept (schema.sql), each chain's outcome kept as its attempts are written:
-- seqk.store.writes.append_attempts replaces the rows of the chains a write touched (forget, then
-- keep, in the write's transaction); a migration or seqk.store.kept.rebuild_kept_chains keeps every
-- chain from the attempts. $keys is a JSON array of {run_id, generation, task_index, chain_index},
-- parsed as the statement runs.

-- name: forget_kept_chains(keys) -> none
-- Nothing: the chain_kept rows of the chains named are deleted.
DELETE FROM chain_kept
USING (SELECT UNNEST(from_json($keys, '[{"run_id": "VARCHAR", "generation": "INTEGER", "task_index": "INTEGER", "chain_index": "INTEGER"}]'), recursive := true)) AS k
WHERE chain_kept.run_id = k.run_id AND chain_kept.generation = k.generation
  AND chain_kept.task_index = k.task_index AND chain_kept.chain_index = k.chain_index;

-- name: keep_chains(keys) -> none
-- Nothing: the chains named are kept in chain_kept as their attempts and calls now have them
-- (chain_kept_rows); forget_kept_chains first.
INSERT INTO chain_kept BY NAME
SELECT * FROM chain_kept_rows(keys := from_json($keys, '[{"run_id": "VARCHAR", "generation": "INTEGER", "task_index": "INTEGER", "chain_index": "INTEGER"}]'));

-- name: forget_all_kept_chains() -> none
-- Nothing: every chain_kept row is deleted.
DELETE FROM chain_kept;

-- name: keep_all_chains() -> none
-- Nothing: every chain of every generation is kept in chain_kept from its attempts and calls
-- (chain_kept_rows); forget_all_kept_chains first.
INSERT INTO chain_kept BY NAME SELECT * FROM chain_kept_rows();

-- name: kept_chains_differ() -> scalar
-- How many rows differ between chain_kept and a recomputation from attempts (chain_kept_rows), each
-- way (0: the kept outcomes are exact). Dollar sums are compared to 1e-9: a sum over a chain's calls
-- may add them in another order. The tests' check.
WITH kept AS (
    SELECT * REPLACE (list_transform(cost_usd, x -> round(x, 9)) AS cost_usd,
                      round(valid_cost_usd, 9) AS valid_cost_usd, round(spent_usd, 9) AS spent_usd)
    FROM chain_kept
),
again AS (
    SELECT * REPLACE (list_transform(cost_usd, x -> round(x, 9)) AS cost_usd,
                      round(valid_cost_usd, 9) AS valid_cost_usd, round(spent_usd, 9) AS spent_usd)
    FROM chain_kept_rows()
)
SELECT (SELECT count(*) FROM (SELECT * FROM kept EXCEPT ALL SELECT * FROM again))
     + (SELECT count(*) FROM (SELECT * FROM again EXCEPT ALL SELECT * FROM kept));
