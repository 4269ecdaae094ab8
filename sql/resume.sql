-- name: pending_attempts(task_indices, run_id, generation, k, is_seq, chains) -> tuples
-- (task_index, chain_index, attempt_index) still to run for the selected tasks of one run, in
-- order. pass@k: every sample index in 1..k of chain 1 that has no valid attempt (errors are
-- redone). seq@k: for each chain 1..chains, the one attempt after its valid prefix, unless a
-- valid attempt of that chain succeeded or k is reached.
WITH selected AS (
    SELECT UNNEST($task_indices::INTEGER[]) AS task_index
),
valid AS (
    SELECT task_index, chain_index, attempt_index, success
    FROM attempts
    WHERE run_id = $run_id AND generation = $generation AND status = 'ok'
),
seq_state AS (
    -- seq@k writes attempt t+1 only after a valid attempt t, so the valid rows
    -- of a chain are exactly 1..n_valid.
    SELECT s.task_index, c.chain_index::INTEGER AS chain_index,
           count(v.attempt_index) AS n_valid,
           coalesce(bool_or(v.success), false) AS solved
    FROM selected s CROSS JOIN range(1, $chains + 1) AS c(chain_index)
    LEFT JOIN valid v ON v.task_index = s.task_index AND v.chain_index = c.chain_index
    GROUP BY s.task_index, c.chain_index
)
SELECT task_index, chain_index, attempt_index FROM (
    SELECT s.task_index, 1 AS chain_index, g.attempt_index::INTEGER AS attempt_index
    FROM selected s CROSS JOIN range(1, $k + 1) AS g(attempt_index)
    WHERE NOT $is_seq
      AND NOT EXISTS (
          SELECT 1 FROM valid v
          WHERE v.task_index = s.task_index AND v.attempt_index = g.attempt_index)
    UNION ALL
    SELECT task_index, chain_index, (n_valid + 1)::INTEGER
    FROM seq_state
    WHERE $is_seq AND NOT solved AND n_valid < $k
)
ORDER BY task_index, chain_index, attempt_index;

-- name: seq_history(run_id, generation, task_indices) -> rows
-- The valid attempts of the given tasks, by chain and in order: what the next seq@k prompt of
-- each chain shows, with the verdict and uid so a failed attempt whose critic failed can get
-- its feedback written later.
SELECT task_index, attempt_index, output, feedback, attempt_uid, success, score,
       raw_eval_output, judge_details, chain_index
FROM attempts
WHERE run_id = $run_id AND generation = $generation AND status = 'ok'
  AND list_contains($task_indices::INTEGER[], task_index)
ORDER BY task_index, chain_index, attempt_index;

-- name: fill_feedback(feedback, error, attempt_uid) -> none
-- Writes the feedback of a valid, failed attempt whose critic had failed, once a retried critic
-- produced it (or records the new failure); the one update to an attempt row. Returns nothing.
UPDATE attempts SET feedback = $feedback, error = $error WHERE attempt_uid = $attempt_uid;

-- name: last_call_index(attempt_uid) -> scalar
-- The highest call_index of an attempt's calls (0 when none): where a later call is numbered from.
SELECT coalesce(max(call_index), 0) FROM calls WHERE attempt_uid = $attempt_uid;

-- name: insert_call(attempt_uid, run_id, generation, task_index, chain_index, attempt_index, call_index, role, model, prompt, output, input_tokens, cached_tokens, thinking_tokens, output_tokens, cost_usd, latency_s, retries, error, started_at) -> none
-- Appends one call row (a critic call made for an earlier attempt's late feedback); returns nothing.
INSERT INTO calls (attempt_uid, run_id, generation, task_index, chain_index, attempt_index,
                   call_index, role, model, prompt, output, input_tokens, cached_tokens,
                   thinking_tokens, output_tokens, cost_usd, latency_s, retries, error, started_at)
VALUES ($attempt_uid, $run_id, $generation, $task_index, $chain_index, $attempt_index,
        $call_index, $role, $model, $prompt, $output, $input_tokens, $cached_tokens,
        $thinking_tokens, $output_tokens, $cost_usd, $latency_s, $retries, $error, $started_at);

-- name: kept_outputs(run_id, generation, task_indices) -> tuples
-- (task_index, chain_index, attempt_index, prompt, output, k) of the selected tasks' slots that have no valid
-- row and whose latest row is a judge-stage error that kept the actor's output: the next run asks
-- the judge again on that output instead of sampling the actor anew (re-rolling the actor until
-- the judge parses would bias success upward). k is the K the kept prompt was built with.
SELECT task_index, chain_index, attempt_index, prompt, output, k FROM (
    SELECT task_index, chain_index, attempt_index, status, error->>'stage' AS stage, prompt, output, k
    FROM attempts
    WHERE run_id = $run_id AND generation = $generation
      AND list_contains($task_indices::INTEGER[], task_index)
    QUALIFY row_number() OVER (
        PARTITION BY task_index, chain_index, attempt_index
        ORDER BY (status = 'ok') DESC, finished_at DESC
    ) = 1
)
WHERE status = 'error' AND stage = 'judge' AND output IS NOT NULL
ORDER BY task_index, chain_index, attempt_index;
