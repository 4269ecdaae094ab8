-- Sequential studies (seqk.run.study): the declaration, the tasks as they entered the confidence
-- sequence, the sequence after each look; and what the study reads of its two runs. A lake has
-- no primary key: each read keeps one row per key (the first written).

-- name: insert_study(study_id, seq_run_id, partner_run_id, question, alpha, margin, budget_usd, budget_usd_per_task, order_seed, task_order, declaration, seqk_version) -> none
-- Registers a study's declaration and task order; returns nothing.
INSERT INTO studies (study_id, seq_run_id, partner_run_id, question, alpha, margin, budget_usd,
                     budget_usd_per_task, order_seed, task_order, declaration, seqk_version, created_at)
VALUES ($study_id, $seq_run_id, $partner_run_id, $question, $alpha, $margin, $budget_usd,
        $budget_usd_per_task, $order_seed, $task_order, $declaration, $seqk_version, now()::TIMESTAMP);

-- name: studies_of_runs(seq_run_id, partner_run_id) -> rows
-- The studies (every column) whose arms include either run, oldest first.
SELECT * FROM (
    SELECT * FROM studies QUALIFY row_number() OVER (PARTITION BY study_id ORDER BY created_at) = 1
)
WHERE seq_run_id IN ($seq_run_id, $partner_run_id) OR partner_run_id IN ($seq_run_id, $partner_run_id)
ORDER BY created_at, study_id;

-- name: list_studies() -> rows
-- Every study (every column of studies) with its latest look: n_tasks, n_ranged, estimate, low,
-- high, decision, stop_reason, spent_usd, full_cost_usd, cells, updated_at (NULL before the first
-- look; also n_used), and n_updates; oldest first.
WITH s AS (
    SELECT * FROM studies QUALIFY row_number() OVER (PARTITION BY study_id ORDER BY created_at) = 1
),
u AS (
    SELECT *, count(*) OVER (PARTITION BY study_id) AS n_updates
    FROM (SELECT * FROM study_updates
          QUALIFY row_number() OVER (PARTITION BY study_id, update_index ORDER BY updated_at) = 1)
    QUALIFY row_number() OVER (PARTITION BY study_id ORDER BY update_index DESC) = 1
)
SELECT s.*, u.n_tasks, u.n_used, u.n_ranged, u.estimate, u.low, u.high, u.decision, u.stop_reason,
       u.spent_usd, u.full_cost_usd, u.cells, u.updated_at, coalesce(u.n_updates, 0) AS n_updates
FROM s LEFT JOIN u USING (study_id)
ORDER BY s.created_at, s.study_id;

-- name: insert_study_tasks(study_id, rows) -> none
-- Enters tasks into a study's sequence from $rows, a JSON array of {position, task_index, seq_low,
-- seq_high, partner_low, partner_high, seq_cost_usd, partner_cost_usd}; returns nothing.
INSERT INTO study_tasks (study_id, position, task_index, seq_low, seq_high, partner_low, partner_high,
                         seq_cost_usd, partner_cost_usd, entered_at)
SELECT $study_id, t.position, t.task_index, t.seq_low, t.seq_high, t.partner_low, t.partner_high,
       t.seq_cost_usd, t.partner_cost_usd, now()::TIMESTAMP
FROM (SELECT UNNEST(from_json($rows, '[{"position": "INTEGER", "task_index": "INTEGER",
      "seq_low": "DOUBLE", "seq_high": "DOUBLE", "partner_low": "DOUBLE", "partner_high": "DOUBLE",
      "seq_cost_usd": "DOUBLE", "partner_cost_usd": "DOUBLE"}]')) AS t);

-- name: study_tasks_of(study_id) -> rows
-- The study's entered tasks in order: position, task_index, seq_low, seq_high, partner_low,
-- partner_high, seq_cost_usd, partner_cost_usd.
SELECT position, task_index, seq_low, seq_high, partner_low, partner_high, seq_cost_usd,
       partner_cost_usd
FROM study_tasks
WHERE study_id = $study_id
QUALIFY row_number() OVER (PARTITION BY position ORDER BY entered_at) = 1
ORDER BY position;

-- name: insert_study_update(study_id, update_index, n_tasks, n_used, n_ranged, estimate, low, high, decision, stop_reason, spent_usd, full_cost_usd, budget_usd, cells) -> none
-- Records the sequence after one look; returns nothing.
INSERT INTO study_updates (study_id, update_index, n_tasks, n_used, n_ranged, estimate, low, high, decision,
                           stop_reason, spent_usd, full_cost_usd, budget_usd, cells, updated_at)
VALUES ($study_id, $update_index, $n_tasks, $n_used, $n_ranged, $estimate, $low, $high, $decision,
        $stop_reason, $spent_usd, $full_cost_usd, $budget_usd, $cells, now()::TIMESTAMP);

-- name: study_updates_of(study_id) -> rows
-- The sequence after each look, in order: update_index, n_tasks, n_used, n_ranged, estimate, low,
-- high, decision, stop_reason, spent_usd, full_cost_usd, budget_usd, cells, updated_at.
SELECT update_index, n_tasks, n_used, n_ranged, estimate, low, high, decision, stop_reason, spent_usd,
       full_cost_usd, budget_usd, cells, updated_at
FROM study_updates
WHERE study_id = $study_id
QUALIFY row_number() OVER (PARTITION BY update_index ORDER BY updated_at) = 1
ORDER BY update_index;

-- name: study_chain_outcomes(run_ids, task_indices) -> rows
-- Per (run, task, chain) of the given runs and tasks, from the attempts that count (errors not
-- scored): run_id, task_index, chain_index, metric, k, chains, n_attempts, n_valid, n_success,
-- first_success, valid_prefix, settled_prefix, ended_in_error.
SELECT run_id, task_index, chain_index, metric, k, chains, n_attempts, n_valid, n_success,
       first_success, valid_prefix, settled_prefix, ended_in_error
FROM task_outcomes_of(false, run_ids := $run_ids::VARCHAR[])
WHERE list_contains($task_indices::INTEGER[], task_index)
ORDER BY run_id, task_index, chain_index;

-- name: study_task_spend(run_ids, task_indices) -> rows
-- Per (run, task) of the given runs and tasks with at least one call of the current generation:
-- cost_usd (NULL when no call was priced), n_unpriced_calls (calls that returned tokens but have
-- no price).
SELECT run_id, task_index, exact_sum(cost_usd) AS cost_usd,
       count(*) FILTER (WHERE cost_usd IS NULL AND error IS NULL) AS n_unpriced_calls
FROM current_calls
WHERE list_contains($run_ids::VARCHAR[], run_id) AND list_contains($task_indices::INTEGER[], task_index)
GROUP BY run_id, task_index
ORDER BY run_id, task_index;

-- name: study_cells(run_ids, task_indices) -> rows
-- Per (run, width, depth) of the width x depth frontier over the given tasks: value (the mean over
-- the n_tasks with a value there), cost_usd_per_task (the mean expected spend of the cell over the
-- same tasks; NULL when no call of the run was priced), n_tasks. What an equal_budget study
-- chooses its cells on, from its pilot tasks.
SELECT run_id, width, depth, exact_avg(value) AS value, count(value) AS n_tasks,
       CASE WHEN bool_or(priced) THEN exact_avg(CASE WHEN value IS NOT NULL THEN cost_usd END) END
           AS cost_usd_per_task
FROM frontier_tasks_of(false, run_ids := $run_ids::VARCHAR[])
WHERE list_contains($task_indices::INTEGER[], task_index)
GROUP BY run_id, width, depth
ORDER BY run_id, width, depth;
