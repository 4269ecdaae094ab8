-- name: pending_attempts(task_indices, run_id, generation, k, is_seq) -> tuples
-- (task_index, attempt_index) still to run for the selected tasks of one run, in order.
-- pass@k: every sample index in 1..k that has no valid attempt (errors are redone).
-- seq@k: the one attempt after the valid prefix, unless a valid attempt succeeded or k is reached.
WITH selected AS (
    SELECT UNNEST($task_indices::INTEGER[]) AS task_index
),
valid AS (
    SELECT task_index, attempt_index, success
    FROM attempts
    WHERE run_id = $run_id AND generation = $generation AND status = 'ok'
),
seq_state AS (
    -- seq@k writes attempt t+1 only after a valid attempt t, so the valid rows
    -- of a task are exactly 1..n_valid.
    SELECT s.task_index,
           count(v.attempt_index) AS n_valid,
           coalesce(bool_or(v.success), false) AS solved
    FROM selected s LEFT JOIN valid v USING (task_index)
    GROUP BY s.task_index
)
SELECT task_index, attempt_index FROM (
    SELECT s.task_index, g.attempt_index::INTEGER AS attempt_index
    FROM selected s CROSS JOIN range(1, $k + 1) AS g(attempt_index)
    WHERE NOT $is_seq
      AND NOT EXISTS (
          SELECT 1 FROM valid v
          WHERE v.task_index = s.task_index AND v.attempt_index = g.attempt_index)
    UNION ALL
    SELECT task_index, (n_valid + 1)::INTEGER
    FROM seq_state
    WHERE $is_seq AND NOT solved AND n_valid < $k
)
ORDER BY task_index, attempt_index;

-- name: seq_history(run_id, generation, task_indices) -> rows
-- The valid attempts of the given tasks, in order: what the next seq@k prompt shows, with the
-- verdict and uid so a failed attempt whose critic failed can get its feedback written later.
SELECT task_index, attempt_index, output, feedback, attempt_uid, success, score,
       raw_eval_output, judge_details
FROM attempts_filled
WHERE run_id = $run_id AND generation = $generation AND status = 'ok'
  AND list_contains($task_indices::INTEGER[], task_index)
ORDER BY task_index, attempt_index;

-- name: fill_feedback(attempt_uid, feedback, error) -> none
-- Writes the feedback of a valid, failed attempt whose critic had failed, once a retried critic
-- produced it (or records the new failure), appended to feedback_fills (attempts_filled applies
-- the latest). Returns nothing.
INSERT INTO feedback_fills (attempt_uid, feedback, error, filled_at)
VALUES ($attempt_uid, $feedback, $error, now()::TIMESTAMP);

-- name: last_call_index(attempt_uid) -> scalar
-- The highest call_index of an attempt's calls (0 when none): where a later call is numbered from.
SELECT coalesce(max(call_index), 0) FROM calls WHERE attempt_uid = $attempt_uid;

-- name: insert_call(attempt_uid, run_id, generation, task_index, attempt_index, call_index, role, model, prompt, output, input_tokens, cached_tokens, thinking_tokens, output_tokens, cost_usd, latency_s, retries, error, started_at, cache_write_tokens, price_tier) -> none
-- Appends one call row (a critic call made for an earlier attempt's late feedback); returns nothing.
INSERT INTO calls (attempt_uid, run_id, generation, task_index, attempt_index, call_index, role,
                   model, prompt, output, input_tokens, cached_tokens, thinking_tokens,
                   output_tokens, cost_usd, latency_s, retries, error, started_at,
                   cache_write_tokens, price_tier)
VALUES ($attempt_uid, $run_id, $generation, $task_index, $attempt_index, $call_index, $role,
        $model, $prompt, $output, $input_tokens, $cached_tokens, $thinking_tokens,
        $output_tokens, $cost_usd, $latency_s, $retries, $error, $started_at,
        $cache_write_tokens, $price_tier);

-- name: kept_outputs(run_id, generation, task_indices) -> tuples
-- (task_index, attempt_index, prompt, output, k) of the selected tasks' slots that have no valid
-- row and whose latest row is a judge-stage error that kept the actor's output: the next run asks
-- the judge again on that output instead of sampling the actor anew (re-rolling the actor until
-- the judge parses would bias success upward). k is the K the kept prompt was built with.
SELECT task_index, attempt_index, prompt, output, k FROM (
    SELECT task_index, attempt_index, status, error->>'stage' AS stage, prompt, output, k
    FROM attempts
    WHERE run_id = $run_id AND generation = $generation
      AND list_contains($task_indices::INTEGER[], task_index)
    QUALIFY row_number() OVER (
        PARTITION BY task_index, attempt_index
        ORDER BY (status = 'ok') DESC, finished_at DESC
    ) = 1
)
WHERE status = 'error' AND stage = 'judge' AND output IS NOT NULL
ORDER BY task_index, attempt_index;

-- name: generation_paid(run_id, generation) -> rows
-- What the attempts of one generation of a run paid, as a restart would discard it:
-- n_attempts (every attempt row, errors included), cost_usd (the priced calls' sum; NULL when
-- no call was priced), n_unpriced_calls (calls that returned tokens but have no price),
-- input_tokens and output_tokens (every call).
SELECT (SELECT count(*) FROM attempts WHERE run_id = $run_id AND generation = $generation) AS n_attempts,
       sum(cost_usd) AS cost_usd,
       count(*) FILTER (WHERE cost_usd IS NULL AND error IS NULL) AS n_unpriced_calls,
       coalesce(sum(input_tokens), 0) AS input_tokens,
       coalesce(sum(output_tokens), 0) AS output_tokens
FROM calls
WHERE run_id = $run_id AND generation = $generation;
