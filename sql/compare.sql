-- Queries behind `seqk compare A B` and `report --compare --by` (seqk/analysis/compare.py,
-- seqk/analysis/grouped.py). The per-task work lives in task_outcomes_of and task_curve_of
-- (views.sql), as for `seqk report`; a task is shared by two runs when it has the same
-- task_index and the same content (tasks.content_hash) in both.

-- name: compare_solved(errors_as_failures, run_a, run_b) -> rows
-- One row per task both runs hold, in task order: task_index, task_id and, for each run (a_, b_),
-- solved_at: the first attempt (or sample) index at which any of the task's chains succeeded
-- (NULL when none did), solved_chain: that chain (the lowest one on a tie), and settled: whether
-- the task's outcome is known: solved, or every chain the run asks for present with all its k
-- attempts known to have failed (an errored attempt leaves it unsettled unless
-- errors_as_failures). What the flips are read from: a task is solved by a run when any of its
-- attempts succeeded, any chain, any sample.
WITH shared AS (
    SELECT a.task_index, a.task_id
    FROM tasks a
    JOIN tasks b ON b.run_id = $run_b AND b.task_index = a.task_index AND b.content_hash = a.content_hash
    WHERE a.run_id = $run_a
),
per_task AS (
    SELECT run_id, task_index,
           min(first_success) AS solved_at,
           min_by(chain_index, [first_success, chain_index]) FILTER (WHERE first_success IS NOT NULL)
               AS solved_chain,
           count(*) = any_value(chains) AND bool_and(known_to >= k) AS all_failed_known
    FROM task_outcomes_of($errors_as_failures, run_ids := [$run_a, $run_b])
    GROUP BY run_id, task_index
)
SELECT s.task_index, s.task_id,
       a.solved_at AS a_solved_at, a.solved_chain AS a_solved_chain,
       coalesce(a.solved_at IS NOT NULL OR a.all_failed_known, false) AS a_settled,
       b.solved_at AS b_solved_at, b.solved_chain AS b_solved_chain,
       coalesce(b.solved_at IS NOT NULL OR b.all_failed_known, false) AS b_settled
FROM shared s
LEFT JOIN per_task a ON a.run_id = $run_a AND a.task_index = s.task_index
LEFT JOIN per_task b ON b.run_id = $run_b AND b.task_index = s.task_index
ORDER BY s.task_index;

-- name: task_values_at(errors_as_failures, run_ids, t) -> tuples
-- (run_id, task_index, content_hash, value) of the given runs' tasks counted at t (task_curve_of:
-- seq@t, or Chen's pass@t; the mean over a task's chains), by run and task: what a ranking of
-- several runs on their shared tasks resamples.
SELECT c.run_id, c.task_index, x.content_hash, c.value
FROM task_curve_of($errors_as_failures, run_ids := $run_ids::VARCHAR[]) c
JOIN tasks x USING (run_id, task_index)
WHERE c.t = $t AND c.value IS NOT NULL
ORDER BY c.run_id, c.task_index;
