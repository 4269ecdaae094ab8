-- The reads behind `seqk export`: the canonical folder tree's files and summaries
-- (seqk/io/export.py) and the Parquet tables.

-- name: export_tasks(run_id) -> rows
-- (task_index, task_id, prompt, content_hash, meta) of every task a run registered.
SELECT task_index, task_id, prompt, content_hash, meta
FROM tasks
WHERE run_id = $run_id
ORDER BY task_index;

-- name: export_attempts(run_id) -> rows
-- The attempt rows of a run's current generation that the folder tree holds: the row that
-- counts in each (task, attempt) slot, plus every error row (superseded ones included, since
-- their calls were paid for). `counts` says whether the row is the one the metrics use. Chain 1
-- only: seq_k's layout has one chain per task (Parquet carries every chain).
WITH counting AS (SELECT attempt_uid FROM current_attempts_of(run_ids := [$run_id]))
SELECT a.attempt_uid, a.task_index, a.attempt_index, a.k, a.status, a.success, a.score,
       a.prompt, a.output, a.raw_eval_output, a.judge_details, a.feedback, a.error,
       a.started_at, a.finished_at, c.attempt_uid IS NOT NULL AS counts
FROM attempts_filled a
JOIN runs r ON a.run_id = r.run_id AND a.generation = r.generation
LEFT JOIN counting c ON c.attempt_uid = a.attempt_uid
WHERE a.run_id = $run_id AND a.chain_index = 1 AND (a.status = 'error' OR c.attempt_uid IS NOT NULL)
ORDER BY a.task_index, a.attempt_index, a.finished_at;

-- name: export_calls(run_id) -> rows
-- Every LLM call of chain 1 of a run's current generation (the folder tree's chain), by
-- attempt and call order.
SELECT attempt_uid, task_index, attempt_index, call_index, role, model, prompt, output,
       input_tokens, cached_tokens, thinking_tokens, output_tokens, cost_usd, latency_s,
       retries, error, started_at, cache_write_tokens, price_tier
FROM current_calls
WHERE run_id = $run_id AND chain_index = 1
ORDER BY task_index, attempt_index, attempt_uid, call_index;

-- name: export_tokens(run_id) -> rows
-- Token totals and cost per model of chain 1 of a run's current generation (what the folder
-- tree holds): one row per (task_index,
-- model), and one per model with task_index NULL for the whole run. cost_usd sums the priced
-- calls (a lower bound when n_unpriced_calls > 0; NULL when none was priced, never 0), as
-- report and status count it.
SELECT task_index, model,
       coalesce(sum(input_tokens), 0)::BIGINT    AS input_tokens,
       coalesce(sum(cached_tokens), 0)::BIGINT   AS cached_tokens,
       coalesce(sum(thinking_tokens), 0)::BIGINT AS thinking_tokens,
       coalesce(sum(output_tokens), 0)::BIGINT   AS output_tokens,
       exact_sum(cost_usd)                      AS cost_usd,
       n_unpriced_calls(cost_usd, error) AS n_unpriced_calls,
       grouping(task_index) = 1                 AS whole_run
FROM current_calls
WHERE run_id = $run_id AND chain_index = 1
GROUP BY GROUPING SETS ((task_index, model), (model))
ORDER BY whole_run, task_index, model;

-- name: export_metric_curve(run_id) -> rows
-- (t, value, se, n_tasks) of one run for summary.json, from the run_curve view: on success,
-- over the tasks whose outcome at t is known (errors left out, never scored as failures).
SELECT t, value, se, n_tasks FROM run_curve WHERE run_id = $run_id ORDER BY t;

-- name: export_parquet_rows(run_ids) -> rows
-- Of each given run id, in order: its rows in tasks, attempts and calls (all generations,
-- superseded rows included), so that export --parquet reads runs in groups of bounded size.
WITH t AS (
    SELECT run_id, count(*)::BIGINT AS n FROM tasks
    WHERE list_contains($run_ids::VARCHAR[], run_id) GROUP BY run_id
),
a AS (
    SELECT run_id, count(*)::BIGINT AS n FROM attempts
    WHERE list_contains($run_ids::VARCHAR[], run_id) GROUP BY run_id
),
c AS (
    SELECT run_id, count(*)::BIGINT AS n FROM calls
    WHERE list_contains($run_ids::VARCHAR[], run_id) GROUP BY run_id
)
SELECT r.run_id, coalesce(t.n, 0) AS tasks, coalesce(a.n, 0) AS attempts, coalesce(c.n, 0) AS calls
FROM (SELECT unnest($run_ids::VARCHAR[]) AS run_id) r
LEFT JOIN t USING (run_id) LEFT JOIN a USING (run_id) LEFT JOIN c USING (run_id)
ORDER BY r.run_id;

-- name: export_parquet_runs(run_ids) -> batches
-- The runs rows of the given run ids, plus the partition columns run_key (run_id with '/'
-- written '~', path-safe) and benchmark.
SELECT *, replace(run_id, '/', '~') AS run_key
FROM runs
WHERE list_contains($run_ids::VARCHAR[], run_id)
ORDER BY run_id;

-- name: export_parquet_tasks(run_ids) -> batches
-- The tasks rows of the given run ids, plus the partition columns benchmark and run_key.
SELECT t.*, r.benchmark, replace(t.run_id, '/', '~') AS run_key
FROM tasks t JOIN runs r USING (run_id)
WHERE list_contains($run_ids::VARCHAR[], t.run_id)
ORDER BY t.run_id, t.task_index;

-- name: export_parquet_attempts(run_ids) -> batches
-- Every attempt row of the given run ids (all generations, superseded rows included), plus
-- `counts` (the row the metrics use) and the partition columns benchmark and run_key.
SELECT a.*,
       a.attempt_uid IN (SELECT attempt_uid FROM current_attempts_of(run_ids := $run_ids::VARCHAR[])) AS counts,
       r.benchmark, replace(a.run_id, '/', '~') AS run_key
FROM attempts_filled a JOIN runs r USING (run_id)
WHERE list_contains($run_ids::VARCHAR[], a.run_id)
ORDER BY a.run_id, a.generation, a.task_index, a.chain_index, a.attempt_index, a.finished_at;

-- name: export_parquet_calls(run_ids) -> batches
-- Every call row of the given run ids (all generations), plus the partition columns
-- benchmark and run_key.
SELECT c.*, r.benchmark, replace(c.run_id, '/', '~') AS run_key
FROM calls c JOIN runs r USING (run_id)
WHERE list_contains($run_ids::VARCHAR[], c.run_id)
ORDER BY c.run_id, c.generation, c.task_index, c.chain_index, c.attempt_index, c.attempt_uid,
         c.call_index;
