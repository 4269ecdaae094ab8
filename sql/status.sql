-- name: run_status(run_ids) -> rows
-- One row per run: settings, task counts (registered, started, finished: every chain done;
-- passed: any chain solved), valid and
-- open-error attempts, tokens and cost of the current generation, and `updated_at`: when its
-- last counted attempt finished (the run's creation time while it has none).
WITH progress AS (
    SELECT r.run_id,
           count(t.task_index)                       AS n_tasks,
           count(p.task_index)                       AS n_started,
           count(*) FILTER (WHERE p.n_chains_finished >= r.chains) AS n_finished,
           count(*) FILTER (WHERE p.solved)          AS n_passed,
           coalesce(sum(p.n_valid), 0)::BIGINT       AS n_valid_attempts,
           coalesce(sum(p.n_error), 0)::BIGINT       AS n_error_attempts,
           max(p.last_finished_at)                   AS last_finished_at
    FROM runs r
    LEFT JOIN tasks t ON t.run_id = r.run_id
    LEFT JOIN task_progress_of(run_ids := CASE WHEN len($run_ids::VARCHAR[]) > 0 THEN $run_ids::VARCHAR[] END) p
           ON p.run_id = t.run_id AND p.task_index = t.task_index
    WHERE len($run_ids::VARCHAR[]) = 0 OR list_contains($run_ids::VARCHAR[], r.run_id)
    GROUP BY r.run_id
),
spend AS (
    SELECT run_id,
           sum(input_tokens)::BIGINT  AS input_tokens,
           sum(output_tokens)::BIGINT AS output_tokens,
           sum(cost_usd)              AS cost_usd,
           count(*) FILTER (WHERE cost_usd IS NULL AND error IS NULL) AS n_unpriced_calls
    FROM current_calls
    GROUP BY run_id
)
SELECT r.run_id, r.benchmark, r.metric, r.k, r.actor_model, r.feedback_mode,
       p.n_tasks, p.n_started, p.n_finished, p.n_passed, p.n_valid_attempts, p.n_error_attempts,
       coalesce(s.input_tokens, 0) AS input_tokens, coalesce(s.output_tokens, 0) AS output_tokens,
       s.cost_usd, coalesce(s.n_unpriced_calls, 0) AS n_unpriced_calls,
       coalesce(p.last_finished_at, r.created_at) AS updated_at
FROM runs r
JOIN progress p USING (run_id)
LEFT JOIN spend s USING (run_id)
WHERE len($run_ids::VARCHAR[]) = 0 OR list_contains($run_ids::VARCHAR[], r.run_id)
ORDER BY r.run_id;
