-- Views over the append-only tables. Executed whole on every read-write open
-- (CREATE OR REPLACE), so a newer seqk upgrades them in place.

-- The attempt that counts in each slot (run, task, attempt_index) of a run's
-- current generation: the valid row if there is one, else the latest error.
CREATE OR REPLACE VIEW current_attempts AS
SELECT a.*
FROM attempts a
JOIN runs r ON a.run_id = r.run_id AND a.generation = r.generation
QUALIFY row_number() OVER (
    PARTITION BY a.run_id, a.task_index, a.attempt_index
    ORDER BY (a.status = 'ok') DESC, a.finished_at DESC
) = 1;

-- Every call of the current generation, whatever its attempt's fate: what was paid for.
CREATE OR REPLACE VIEW current_calls AS
SELECT c.*
FROM calls c
JOIN runs r ON c.run_id = r.run_id AND c.generation = r.generation;

-- One row per (run, task) that has at least one attempt.
CREATE OR REPLACE VIEW task_progress AS
SELECT
    run_id,
    task_index,
    count(*) FILTER (WHERE status = 'ok')                 AS n_valid,
    count(*) FILTER (WHERE status = 'error')              AS n_error,
    coalesce(bool_or(success) FILTER (WHERE status = 'ok'), false) AS solved,
    min(attempt_index) FILTER (WHERE status = 'ok' AND success) AS first_success_index,
    max(finished_at)                                      AS last_finished_at
FROM current_attempts
GROUP BY run_id, task_index;
