-- The table chain_kept (schema.sql), each chain's outcome kept as its attempts are written:
-- seqk.store.writes.append_attempts replaces the rows of the chains a write touched (in the write's
-- transaction, below); a migration or seqk.store.kept.rebuild_kept_chains keeps every chain from the
-- attempts (chain_kept_rows in views.sql, the one definition; kept_chains_differ checks the two).

-- The writer's path (seqk.store.kept.keep_chains_of): the chains of a commit, registered as the
-- Arrow table seqk_kept_keys {run_id, generation, task_index, chain_index}, are read back with
-- plain statements that plan in well under a millisecond (chain_kept_rows, macro-expanded, took
-- ~17 ms to plan each commit), folded in Python into chain_kept_rows's columns, and appended from
-- the Arrow table seqk_kept_batch.

-- name: kept_chain_attempts() -> tuples
-- (run_id, generation, task_index, chain_index, attempt_index, status, success, score,
-- finished_at) of every attempt of the chains in seqk_kept_keys, in no order.
SELECT a.run_id, a.generation, a.task_index, a.chain_index, a.attempt_index, a.status, a.success,
       a.score, a.finished_at
FROM attempts a SEMI JOIN seqk_kept_keys k USING (run_id, generation, task_index, chain_index);

-- name: kept_chain_calls() -> tuples
-- (run_id, generation, task_index, chain_index, attempt_index, cost_usd, input_tokens,
-- output_tokens, unpriced, failed) of every call of the chains in seqk_kept_keys, in no order;
-- unpriced: it returned with no price (n_unpriced_calls's rule); failed: it has an error.
SELECT c.run_id, c.generation, c.task_index, c.chain_index, c.attempt_index, c.cost_usd,
       c.input_tokens, c.output_tokens, (c.cost_usd IS NULL AND c.error IS NULL) AS unpriced,
       c.error IS NOT NULL AS failed
FROM calls c SEMI JOIN seqk_kept_keys k USING (run_id, generation, task_index, chain_index);

-- name: forget_registered_kept_chains() -> none
-- Nothing: the chain_kept rows of the chains in seqk_kept_keys are deleted.
DELETE FROM chain_kept USING seqk_kept_keys AS k
WHERE chain_kept.run_id = k.run_id AND chain_kept.generation = k.generation
  AND chain_kept.task_index = k.task_index AND chain_kept.chain_index = k.chain_index;

-- name: append_kept_chains() -> none
-- Nothing: the rows of the Arrow table seqk_kept_batch (chain_kept's columns) are appended to
-- chain_kept; forget_registered_kept_chains first.
INSERT INTO chain_kept BY NAME SELECT * FROM seqk_kept_batch;

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
