-- name: run_status(run_ids) -> rows
-- One row per run: settings, its progress as run_progress_of has it (tasks registered, started,
-- finished, passed; valid and open-error attempts), tokens and cost of the current generation
-- (n_unpriced_calls: calls that returned with no price), and `updated_at`: when its last attempt
-- finished (the run's creation time while it has none).
-- The kept chains read once (chain_tally_of): the progress and the spend both come from its rows.
WITH tally AS MATERIALIZED (
    SELECT * FROM chain_tally_of(
        run_ids := CASE WHEN len($run_ids::VARCHAR[]) > 0 THEN $run_ids::VARCHAR[] END)
),
spend AS (
    -- every call of the current generation, summed per chain as its attempts were written
    SELECT run_id,
           sum(input_tokens)::BIGINT  AS input_tokens,
           sum(output_tokens)::BIGINT AS output_tokens,
           exact_total(spent_usd)     AS cost_usd,
           sum(n_unpriced_calls)::BIGINT AS n_unpriced_calls
    FROM tally
    GROUP BY run_id
)
SELECT r.run_id, r.benchmark, r.metric, r.k, r.actor_model, r.feedback_mode,
       p.n_tasks, p.n_started, p.n_finished, p.n_passed, p.n_valid_attempts, p.n_error_attempts,
       coalesce(s.input_tokens, 0) AS input_tokens, coalesce(s.output_tokens, 0) AS output_tokens,
       s.cost_usd, coalesce(s.n_unpriced_calls, 0) AS n_unpriced_calls,
       coalesce(p.last_finished_at, r.created_at) AS updated_at
FROM runs r
JOIN run_progress_from('tally', run_ids := CASE WHEN len($run_ids::VARCHAR[]) > 0 THEN $run_ids::VARCHAR[] END) p
     USING (run_id)
LEFT JOIN spend s USING (run_id)
WHERE len($run_ids::VARCHAR[]) = 0 OR list_contains($run_ids::VARCHAR[], r.run_id)
ORDER BY r.run_id;
