-- Queries behind seqk/analysis/metrics.py and `seqk report`. The per-task work lives in the views
-- and table macros of views.sql; these select from them for the runs a report covers.
-- $errors_as_failures is a BOOLEAN; $run_ids a VARCHAR[] (NULL for every run).

-- name: report_runs(run_ids, benchmark, model) -> rows
-- The runs' settings (run_id, benchmark, slice, metric, k, chains, feedback_mode, actor_model,
-- judge_model, critic_model, verifier, temperature, shows_grading_info and
-- soft_score_clipped: NULL read as FALSE,
-- shared_seeds: seeded by the rule before seqk.seeds, one seed per sample index for every task;
-- rejudge_of: the run a re-judging run grades again, else NULL; is_primary: the variant says
-- `primary: true`)
-- filtered by run ids, benchmark (or slice) and actor model, each filter NULL for any; in
-- run_id order.
SELECT run_id, benchmark, slice, metric, k, chains, feedback_mode, actor_model, judge_model,
       critic_model, verifier, temperature, coalesce(shows_grading_info, false) AS shows_grading_info,
       coalesce(soft_score_clipped, false) AS soft_score_clipped,
       json_extract_string(config, '$.actor.seed') IS NOT NULL
           AND json_extract_string(config, '$.seed_scheme') IS NULL AS shared_seeds,
       json_extract_string(config, '$.rejudge_of') AS rejudge_of,
       coalesce(json_extract(config, '$.primary')::BOOLEAN, false) AS is_primary
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

-- name: chain_rows(run_ids) -> arrow
-- chain_outcomes_of for the given runs with each task's content_hash, one row per (run, task,
-- chain) in that order: what the estimators of seqk/analysis/survival.py read (the bootstraps
-- re-estimate the survival curves from them, the equal-budget comparison its cells).
SELECT o.run_id, o.task_index, t.content_hash, o.chain_index, o.metric, o.k, o.chains,
       o.n_valid, o.n_success, o.n_error, o.first_success, o.valid_prefix, o.settled_prefix,
       o.event_at, o.censored_at, o.event_if_failures, o.censored_if_failures,
       o.event_if_successes, o.censored_if_successes, o.cost_usd, o.tokens, o.valid_cost_usd,
       o.valid_tokens, o.priced
FROM chain_outcomes_of(run_ids := $run_ids::VARCHAR[]) o
LEFT JOIN tasks t USING (run_id, task_index)
ORDER BY o.run_id, o.task_index, o.chain_index;

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
       exact_sum(cost_usd)                                                AS cost_usd,
       n_unpriced_calls(cost_usd, error)::BIGINT AS n_unpriced_calls
FROM current_calls
WHERE list_contains($run_ids::VARCHAR[], run_id)
GROUP BY run_id, role, model
ORDER BY run_id, role, model;

-- name: rejudge_sources(run_ids) -> rows
-- The runs whose attempts the given re-judging runs' slots grade again: run_id (the re-judging
-- run) and source_run_id, each pair once.
SELECT DISTINCT run_id, source_run_id FROM rejudged_slots WHERE list_contains($run_ids::VARCHAR[], run_id)
ORDER BY run_id, source_run_id;

-- name: run_digests(run_ids) -> rows
-- What a remembered report is checked against before it is used (seqk/analysis/report.py), beside
-- each run's run_fingerprints row (sql/fingerprints.sql: its runs row and its kept chains hashed):
-- per given run, its row counts in the append-only tables a report reads that chain_kept does not
-- cover (attempts, calls, tasks, rejudged_slots: any row added changes one), with the store's
-- schema_info hashed (a migration that rebuilds chain_kept changes it), as text; in run_id order.
-- The caller adds the runs a re-judging run grades (rejudge_sources).
WITH a AS (SELECT run_id, count(*) AS n FROM attempts WHERE list_contains($run_ids::VARCHAR[], run_id) GROUP BY run_id),
c AS (SELECT run_id, count(*) AS n FROM calls WHERE list_contains($run_ids::VARCHAR[], run_id) GROUP BY run_id),
t AS (SELECT run_id, count(*) AS n FROM tasks WHERE list_contains($run_ids::VARCHAR[], run_id) GROUP BY run_id),
j AS (SELECT run_id, count(*) AS n FROM rejudged_slots WHERE list_contains($run_ids::VARCHAR[], run_id) GROUP BY run_id)
SELECT w.run_id,
       coalesce(a.n, 0)::BIGINT AS n_attempts,
       coalesce(c.n, 0)::BIGINT AS n_calls,
       coalesce(t.n, 0)::BIGINT AS n_tasks,
       coalesce(j.n, 0)::BIGINT AS n_rejudged_slots,
       (SELECT sum(hash(s))::VARCHAR FROM schema_info s) AS schema_info
FROM (SELECT DISTINCT unnest($run_ids::VARCHAR[]) AS run_id) w
LEFT JOIN a USING (run_id) LEFT JOIN c USING (run_id) LEFT JOIN t USING (run_id) LEFT JOIN j USING (run_id)
ORDER BY w.run_id;
