-- The table chain_kept (schema.sql), each chain's outcome kept as its attempts are written:
-- seqk.store.writes.append_attempts replaces the rows of the chains a write touched (in the write's
-- transaction, below); a migration or seqk.store.kept.rebuild_kept_chains keeps every chain from the
-- attempts (chain_kept_rows in views.sql, the one definition; kept_chains_differ checks the two).

-- The writer's path (seqk.store.kept.keep_chains_of): the chains of a commit, registered as the
-- Arrow table seqk_kept_keys {key_no, run_id, generation, task_index, chain_index} (key_no: the
-- row's position), have their attempts and calls read back with plain statements that plan in well
-- under a millisecond (chain_kept_rows, macro-expanded, took ~17 ms to plan each commit; grouping
-- and ordering here, ~1.5 ms more a statement), folded over the whole batch with numpy into
-- chain_kept_rows's columns, and appended from the Arrow table seqk_kept_batch.

-- name: kept_chain_attempts() -> arrow
-- Every attempt row of the chains in seqk_kept_keys, in no order: its chain's key_no, its
-- attempt_index, ok (status = 'ok'), solved (ok and a success), value (an ok row's score, or its
-- success as 1.0; NULL for an error) and finished_at: what chain_kept_rows's slots fold.
SELECT k.key_no, a.attempt_index, a.status = 'ok' AS ok,
       coalesce(a.status = 'ok' AND a.success, false) AS solved,
       CASE WHEN a.status = 'ok' THEN coalesce(a.score, a.success::DOUBLE) END AS value,
       a.finished_at
FROM attempts a JOIN seqk_kept_keys k USING (run_id, generation, task_index, chain_index);

-- name: kept_chain_calls() -> arrow
-- Every call of the chains in seqk_kept_keys, in no order: its chain's key_no, its attempt_index,
-- cost_usd, tokens (input + output, NULL as 0), input_tokens, output_tokens, unpriced (it returned
-- with no price: n_unpriced_calls's rule) and failed (it has an error): what chain_kept_rows's
-- slot_spend folds.
SELECT k.key_no, c.attempt_index, c.cost_usd,
       coalesce(c.input_tokens, 0) + coalesce(c.output_tokens, 0) AS tokens,
       c.input_tokens, c.output_tokens, (c.cost_usd IS NULL AND c.error IS NULL) AS unpriced,
       c.error IS NOT NULL AS failed
FROM calls c JOIN seqk_kept_keys k USING (run_id, generation, task_index, chain_index);

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
-- way (0: the kept outcomes are exact). Dollar sums (spend_by_slot's included) are compared to 1e-9: a
-- sum over a chain's calls may add them in another order. The tests' check.
WITH kept AS (
    SELECT * REPLACE (list_transform(cost_usd, x -> round(x, 9)) AS cost_usd,
                      round(valid_cost_usd, 9) AS valid_cost_usd, round(spent_usd, 9) AS spent_usd,
                      list_transform(spend_by_slot, x -> struct_pack(i := x.i, cost_usd := round(x.cost_usd, 9),
                                                                     tokens := x.tokens)) AS spend_by_slot)
    FROM chain_kept
),
again AS (
    SELECT * REPLACE (list_transform(cost_usd, x -> round(x, 9)) AS cost_usd,
                      round(valid_cost_usd, 9) AS valid_cost_usd, round(spent_usd, 9) AS spent_usd,
                      list_transform(spend_by_slot, x -> struct_pack(i := x.i, cost_usd := round(x.cost_usd, 9),
                                                                     tokens := x.tokens)) AS spend_by_slot)
    FROM chain_kept_rows()
)
SELECT (SELECT count(*) FROM (SELECT * FROM kept EXCEPT ALL SELECT * FROM again))
     + (SELECT count(*) FROM (SELECT * FROM again EXCEPT ALL SELECT * FROM kept));
