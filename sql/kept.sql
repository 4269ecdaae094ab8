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
