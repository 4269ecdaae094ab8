-- Queries behind the width x depth frontier, the equal-budget comparison and its charts
-- (seqk/analysis/frontier.py). The per-task work lives in frontier_tasks_of (views.sql); the
-- report computes its cells from chain_rows (metrics.sql), as frontier_tasks_of does.

-- name: frontier_rows(errors_as_failures, run_ids) -> rows
-- Every frontier_of column for the given runs: one row per (run, width, depth), in that order.
SELECT * FROM frontier_of($errors_as_failures, run_ids := $run_ids::VARCHAR[]);

-- name: budget_partners(run_ids) -> rows
-- For each given seq@k run, its budget partner: a pass@k run of the same benchmark, slice,
-- actor, verifier and judge with any k, never a re-judging run (as run_pairs)
-- (seq_run_id, pass_run_id, pass_k, n_candidates): the largest k first, then the same feedback
-- mode, the same temperature, the smallest run_id.
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
     AND json_extract_string(p.config, '$.rejudge_of') IS NULL
    WHERE list_contains($run_ids::VARCHAR[], s.run_id)
)
WHERE choice = 1
ORDER BY seq_run_id;

-- name: pair_discordance(run_id) -> rows
-- For a seq@k run with a pass@k partner (feedback_lift): pass_run_id, n_shared tasks, the
-- discordant ones (n_seq_only, n_pass_only) and the discordance (the expected share of tasks
-- solved by one run only), what `seqk plan` sizes a study from.
SELECT pass_run_id, n_shared, n_seq_only, n_pass_only, discordance
FROM feedback_lift WHERE seq_run_id = $run_id;

-- name: none_partners(run_ids) -> rows
-- For each given seq@k run, its measured stopping-matched partner: a seq@k run of the same
-- benchmark, slice, actor, verifier and judge with feedback_mode 'none' (later attempts see
-- "This is attempt t of K" and nothing of earlier attempts), not itself
-- (seq_run_id, none_run_id, none_k, none_chains, n_candidates): the most attempts per task
-- (chains x k) first, then the same temperature, the smallest run_id.
SELECT seq_run_id, none_run_id, none_k, none_chains, n_candidates FROM (
    SELECT s.run_id AS seq_run_id, p.run_id AS none_run_id, p.k AS none_k, p.chains AS none_chains,
           row_number() OVER (PARTITION BY s.run_id ORDER BY p.chains * p.k DESC,
               (p.temperature IS NOT DISTINCT FROM s.temperature) DESC, p.run_id) AS choice,
           count(*) OVER (PARTITION BY s.run_id) AS n_candidates
    FROM runs s
    JOIN runs p
      ON s.metric = 'seq@k' AND p.metric = 'seq@k' AND p.feedback_mode = 'none'
     AND p.run_id <> s.run_id AND p.benchmark = s.benchmark AND p.slice = s.slice
     AND p.actor_model = s.actor_model AND p.verifier = s.verifier
     AND p.judge_model IS NOT DISTINCT FROM s.judge_model
     AND json_extract_string(p.config, '$.rejudge_of') IS NULL
    WHERE list_contains($run_ids::VARCHAR[], s.run_id)
)
WHERE choice = 1
ORDER BY seq_run_id;
