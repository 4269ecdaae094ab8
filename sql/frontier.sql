-- Queries behind the width x depth frontier, the equal-budget comparison and its charts
-- (seqk/analysis/frontier.py). The per-task work lives in frontier_tasks_of (views.sql).

-- name: frontier_rows(errors_as_failures, run_ids) -> rows
-- Every frontier_of column for the given runs: one row per (run, width, depth), in that order.
SELECT * FROM frontier_of($errors_as_failures, run_ids := $run_ids::VARCHAR[]);

-- name: frontier_task_values(errors_as_failures, run_ids) -> rows
-- The per-task frontier of the given runs (run_id, task_index, content_hash, width, depth,
-- value), tasks with no value there left out: what the equal-budget bootstrap resamples.
SELECT f.run_id, f.task_index, t.content_hash, f.width, f.depth, f.value
FROM frontier_tasks_of($errors_as_failures, run_ids := $run_ids::VARCHAR[]) f
JOIN tasks t USING (run_id, task_index)
WHERE f.value IS NOT NULL
ORDER BY f.run_id, f.width, f.depth, f.task_index;

-- name: budget_partners(run_ids) -> rows
-- For each given seq@k run, its budget partner: a pass@k run of the same benchmark, slice,
-- actor, verifier and judge with any k (seq_run_id, pass_run_id, pass_k, n_candidates): the
-- largest k first, then the same feedback mode, the same temperature, the smallest run_id.
SELECT seq_run_id, pass_run_id, pass_k, n_candidates FROM (
    SELECT s.run_id AS seq_run_id, p.run_id AS pass_run_id, p.k AS pass_k,
           row_number() OVER (PARTITION BY s.run_id ORDER BY p.k DESC,
               (p.feedback_mode = s.feedback_mode) DESC,
               (p.temperature IS NOT DISTINCT FROM s.temperature) DESC, p.run_id) AS choice,
           count(*) OVER (PARTITION BY s.run_id) AS n_candidates
    FROM runs s
    JOIN runs p
      ON s.metric = 'seq@k' AND p.metric = 'pass@k' AND p.benchmark = s.benchmark
     AND p.slice = s.slice AND p.actor_model = s.actor_model AND p.verifier = s.verifier
     AND p.judge_model IS NOT DISTINCT FROM s.judge_model
    WHERE list_contains($run_ids::VARCHAR[], s.run_id)
)
WHERE choice = 1
ORDER BY seq_run_id;

-- name: pair_discordance(run_id) -> rows
-- For a seq@k run with a same-k pass@k partner (feedback_lift): pass_run_id, n_shared tasks
-- and the discordant ones (n_seq_only, n_pass_only), what `seqk plan` sizes a study from.
SELECT pass_run_id, n_shared, n_seq_only, n_pass_only FROM feedback_lift WHERE seq_run_id = $run_id;
