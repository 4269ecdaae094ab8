-- Queries behind seqk/analysis/metrics.py and `seqk report`. The per-task work lives in the views
-- and table macros of views.sql; these select from them for the runs a report covers.
-- $errors_as_failures is a BOOLEAN; $run_ids a VARCHAR[] (NULL for every run).

-- name: report_runs(run_ids, benchmark, model) -> rows
-- The runs' settings (run_id, benchmark, slice, metric, k, feedback_mode, actor_model,
-- judge_model, critic_model, verifier, temperature, shows_grading_info and
-- soft_score_clipped: NULL read as FALSE,
-- shared_seeds: seeded by the rule before seqk.seeds, one seed per sample index for every task;
-- rejudge_of: the run a re-judging run grades again, else NULL)
-- filtered by run ids, benchmark (or slice) and actor model, each filter NULL for any; in
-- run_id order.
SELECT run_id, benchmark, slice, metric, k, feedback_mode, actor_model, judge_model,
       critic_model, verifier, temperature, coalesce(shows_grading_info, false) AS shows_grading_info,
       coalesce(soft_score_clipped, false) AS soft_score_clipped,
       json_extract_string(config, '$.actor.seed') IS NOT NULL
           AND json_extract_string(config, '$.seed_scheme') IS NULL AS shared_seeds,
       json_extract_string(config, '$.rejudge_of') AS rejudge_of
FROM runs
WHERE ($run_ids::VARCHAR[] IS NULL OR list_contains($run_ids::VARCHAR[], run_id))
  AND ($benchmark::VARCHAR IS NULL OR benchmark = $benchmark OR slice = $benchmark)
  AND ($model::VARCHAR IS NULL OR actor_model = $model)
ORDER BY run_id;

-- name: run_curves(errors_as_failures, run_ids) -> rows
-- Every run_curve_of column for the given runs, one row per (run, t), by run then t.
SELECT *
FROM run_curve_of($errors_as_failures, run_ids := $run_ids::VARCHAR[])
ORDER BY run_id, t;

-- name: point_types(run_ids, errors_as_failures) -> tuples
-- The task types the bootstrap resamples, with n tasks each. kind 'seq': each given seq@k
-- run's tasks counted at K by (a_1, a_2, a_3, a_4) = their values at t = 1, 2, K-1, K, for
-- ΔSeq@K, EGS and LGS. kind 'pair': each given seq@k run's tasks shared with its chosen
-- pass@k run, by (seq@1, pass@1, seq@K, pass@K), for the lift and the framing effect (the
-- pairing of paired_tasks_of, on one shared read of the attempts); pass@1 is the pass@k
-- run's sample 1 when the runs share a seed (run_pairs.same_seed), else Chen's estimate;
-- a_5 is Chen's estimate always (NULL for kind 'seq').
WITH pairs AS (
    SELECT seq_run_id, pass_run_id, same_seed FROM run_pairs
    WHERE choice = 1 AND list_contains($run_ids::VARCHAR[], seq_run_id)
),
points AS (
    SELECT p.*, t.content_hash
    FROM task_points_of($errors_as_failures, run_ids := (
             SELECT $run_ids::VARCHAR[] || coalesce(list(pass_run_id), []) FROM pairs)) p
    JOIN tasks t USING (run_id, task_index)
)
SELECT 'seq' AS kind, run_id, NULL AS pass_run_id,
       at_1 AS a_1, at_2 AS a_2, at_k_minus_1 AS a_3, at_k AS a_4, NULL AS a_5, count(*) AS n
FROM points
WHERE metric = 'seq@k' AND list_contains($run_ids::VARCHAR[], run_id) AND at_k IS NOT NULL
GROUP BY ALL
UNION ALL
SELECT 'pair', s.run_id, x.pass_run_id, s.at_1,
       CASE WHEN x.same_seed THEN p.first_at_1 ELSE p.at_1 END, s.at_k, p.at_k, p.at_1, count(*)
FROM pairs x
JOIN points s ON s.run_id = x.seq_run_id
JOIN points p ON p.run_id = x.pass_run_id AND p.task_index = s.task_index
             AND p.content_hash = s.content_hash
GROUP BY ALL
ORDER BY ALL;

-- name: pair_choices(run_ids) -> rows
-- For each given seq@k run: the pass@k run it is compared with, how many candidates there
-- were, and whether both sample with the same seed (run_pairs, choice = 1).
SELECT seq_run_id, pass_run_id, n_candidates, same_seed
FROM run_pairs
WHERE choice = 1 AND list_contains($run_ids::VARCHAR[], seq_run_id)
ORDER BY seq_run_id;

-- name: spend_by_role(run_ids) -> rows
-- Tokens (four fields), cost_usd (NULL when nothing was priced), calls and unpriced calls
-- of the given runs, one row per (run, role, model): task_spend summed over tasks, summed here
-- straight from the calls (grouping by task first cost a million-call report ~0.3 s).
SELECT run_id, role, model,
       count(*)::BIGINT                                                   AS n_calls,
       coalesce(sum(input_tokens), 0)::BIGINT                             AS input_tokens,
       coalesce(sum(cached_tokens), 0)::BIGINT                            AS cached_tokens,
       coalesce(sum(thinking_tokens), 0)::BIGINT                          AS thinking_tokens,
       coalesce(sum(output_tokens), 0)::BIGINT                            AS output_tokens,
       sum(cost_usd)                                                      AS cost_usd,
       n_unpriced_calls(cost_usd, error)::BIGINT AS n_unpriced_calls
FROM current_calls
WHERE list_contains($run_ids::VARCHAR[], run_id)
GROUP BY run_id, role, model
ORDER BY run_id, role, model;

-- name: paired_run_types(errors_as_failures, run_a, t, run_b) -> tuples
-- Two runs' values at t on the tasks both count there (same task_index and content),
-- grouped as (a_value, b_value, n tasks): what a paired comparison resamples.
WITH a AS (
    SELECT c.task_index, x.content_hash, c.value
    FROM task_curve_of($errors_as_failures, run_ids := [$run_a]) c
    JOIN tasks x USING (run_id, task_index)
    WHERE c.t = $t AND c.value IS NOT NULL
),
b AS (
    SELECT c.task_index, x.content_hash, c.value
    FROM task_curve_of($errors_as_failures, run_ids := [$run_b]) c
    JOIN tasks x USING (run_id, task_index)
    WHERE c.t = $t AND c.value IS NOT NULL
)
SELECT a.value AS a_value, b.value AS b_value, count(*) AS n
FROM a JOIN b USING (task_index, content_hash)
GROUP BY ALL
ORDER BY ALL;
