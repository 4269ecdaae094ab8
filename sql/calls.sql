-- The calls table: calls appended, numbered, read back per task, and a run's spend by role.

-- name: append_call_batch() -> none
-- Appends every row of the Arrow table the writer registered as seqk_call_batch (columns by
-- name) to calls; returns nothing.
INSERT INTO calls BY NAME SELECT * FROM seqk_call_batch;

-- name: insert_call(attempt_uid, run_id, generation, task_index, chain_index, attempt_index, call_index, role, model, prompt, output, input_tokens, cached_tokens, thinking_tokens, output_tokens, cost_usd, latency_s, retries, error, started_at, cache_write_tokens, price_tier) -> none
-- Appends one call row (a critic call made for an earlier attempt's late feedback); returns nothing.
INSERT INTO calls (attempt_uid, run_id, generation, task_index, chain_index, attempt_index, call_index, role,
                   model, prompt, output, input_tokens, cached_tokens, thinking_tokens,
                   output_tokens, cost_usd, latency_s, retries, error, started_at,
                   cache_write_tokens, price_tier)
VALUES ($attempt_uid, $run_id, $generation, $task_index, $chain_index, $attempt_index, $call_index, $role,
        $model, $prompt, $output, $input_tokens, $cached_tokens, $thinking_tokens,
        $output_tokens, $cost_usd, $latency_s, $retries, $error, $started_at,
        $cache_write_tokens, $price_tier);

-- name: last_call_index(attempt_uid) -> scalar
-- The highest call_index of an attempt's calls (0 when none): where a later call is numbered from.
SELECT coalesce(max(call_index), 0) FROM calls WHERE attempt_uid = $attempt_uid;

-- name: task_calls(run_id, task_index) -> rows
-- Every LLM call of one task in the run's current generation, by chain, attempt and call order.
SELECT c.attempt_uid, c.attempt_index, c.call_index, c.role, c.model, c.prompt, c.output,
       c.input_tokens, c.cached_tokens, c.thinking_tokens, c.output_tokens, c.cost_usd,
       c.latency_s, c.retries, c.error, c.chain_index
FROM current_calls c
WHERE c.run_id = $run_id AND c.task_index = $task_index
ORDER BY c.chain_index, c.attempt_index, c.started_at, c.call_index;

-- name: run_spend_by_role(run_id) -> tuples
-- Per role, what a run has spent over all its generations (a restart does not refund what the
-- old attempts cost): role, cost_usd (calls of unknown price count 0), and n_attempts, the
-- attempts of the run with at least one call (the same on every row).
SELECT c.role,
       coalesce(exact_sum(c.cost_usd), 0.0) AS cost_usd,
       (SELECT count(DISTINCT attempt_uid) FROM calls WHERE run_id = $run_id) AS n_attempts
FROM calls c
WHERE c.run_id = $run_id
GROUP BY c.role
ORDER BY c.role;
