-- Queries behind the width x depth frontier, the equal-budget comparison and its charts
-- (seqk/analysis/frontier.py). The per-task work lives in frontier_tasks_of (views.sql).

-- name: frontier_rows(errors_as_failures, run_ids) -> rows
-- Every frontier_of column for the given runs: one row per (run, width, depth), in that order.
SELECT * FROM frontier_of($errors_as_failures, run_ids := $run_ids::VARCHAR[]);

-- name: equal_budget_types(errors_as_failures, seq_run_ids, seq_widths, seq_depths, pass_run_ids, pass_widths) -> rows
-- For each equal-budget point i (1-based: the seq@k cell (seq_run_ids[i], seq_widths[i],
-- seq_depths[i]) against pass@m, (pass_run_ids[i], pass_widths[i], depth 1)), the tasks both
-- cells count (same task_index, same content), merged by their pair of per-task values:
-- (point, seq_value, pass_value, n_tasks), in order of point and then of each pair's first task.
-- What the paired bootstrap resamples, computed here: the per-task values of a million
-- attempts are a million rows. The run ids come as JSON text and the integers as list text
-- (seqk.store.int_list): DuckDB tries `import pandas` twice for each element of a Python list
-- parameter, ~85 us each when pandas is absent, and a report has hundreds of points.
WITH points AS (
    SELECT unnest(range(1, len($seq_run_ids::JSON::VARCHAR[]) + 1)) AS point,
           unnest($seq_run_ids::JSON::VARCHAR[]) AS seq_run_id,
           unnest($seq_widths::INTEGER[]) AS seq_width, unnest($seq_depths::INTEGER[]) AS seq_depth,
           unnest($pass_run_ids::JSON::VARCHAR[]) AS pass_run_id,
           unnest($pass_widths::INTEGER[]) AS pass_width
),
-- the runs by number: the million-row joins below go on integers, not run ids and hashes
numbered AS (
    SELECT run_id, row_number() OVER (ORDER BY run_id) AS run_no
    FROM (SELECT seq_run_id AS run_id FROM points UNION SELECT pass_run_id FROM points)
),
cells AS (
    SELECT n.run_no, x.width, x.depth
    FROM (SELECT seq_run_id AS run_id, seq_width AS width, seq_depth AS depth FROM points
          UNION
          SELECT pass_run_id, pass_width, 1 FROM points) x
    JOIN numbered n USING (run_id)
),
-- the tasks each pair of runs shares: same task_index, same content
shared AS (
    SELECT x.seq_run_no, x.pass_run_no, s.task_index
    FROM (SELECT DISTINCT ns.run_no AS seq_run_no, ns.run_id AS seq_run_id,
                          np.run_no AS pass_run_no, np.run_id AS pass_run_id
          FROM points p
          JOIN numbered ns ON ns.run_id = p.seq_run_id
          JOIN numbered np ON np.run_id = p.pass_run_id) x
    JOIN tasks s ON s.run_id = x.seq_run_id
    JOIN tasks q ON q.run_id = x.pass_run_id AND q.task_index = s.task_index
                AND q.content_hash = s.content_hash
),
task_values AS (
    SELECT n.run_no, f.task_index, f.width, f.depth, f.value
    FROM frontier_task_values_of($errors_as_failures,
                                 run_ids := (SELECT list(run_id) FROM numbered)) f
    JOIN numbered n USING (run_id)
    SEMI JOIN cells c ON c.run_no = n.run_no AND c.width = f.width AND c.depth = f.depth
    WHERE f.value IS NOT NULL
)
SELECT p.point, s.value AS seq_value, q.value AS pass_value, count(*) AS n_tasks
FROM (SELECT p.*, ns.run_no AS seq_run_no, np.run_no AS pass_run_no
      FROM points p
      JOIN numbered ns ON ns.run_id = p.seq_run_id
      JOIN numbered np ON np.run_id = p.pass_run_id) p
JOIN shared h ON h.seq_run_no = p.seq_run_no AND h.pass_run_no = p.pass_run_no
JOIN task_values s ON s.run_no = p.seq_run_no AND s.width = p.seq_width AND s.depth = p.seq_depth
                  AND s.task_index = h.task_index
JOIN task_values q ON q.run_no = p.pass_run_no AND q.width = p.pass_width AND q.depth = 1
                  AND q.task_index = h.task_index
GROUP BY p.point, s.value, q.value
ORDER BY p.point, min(s.task_index);

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
