-- One report's per-task outcomes, computed once and served to every query of the report
-- (seqk/store/kept.py). A report's queries (run_curves, point_types, frontier_rows,
-- equal_budget_types) each call task_outcomes_of for the same runs: over a million attempts
-- each call is ~0.5 s of the same grouping. These tables and the macro live in the session's
-- temporary catalog (allowed in a read-only session), are never written to the file, and end
-- with the connection, or sooner with drop_kept_task_outcomes.

-- name: keep_task_outcomes(errors_as_failures, run_ids) -> none
-- Nothing: task_outcomes_of for the given runs, kept in the temporary table kept_task_outcomes.
CREATE OR REPLACE TEMP TABLE kept_task_outcomes AS
SELECT * FROM task_outcomes_of($errors_as_failures, run_ids := $run_ids::VARCHAR[]);

-- name: keep_task_outcomes_for(errors_as_failures, run_ids) -> none
-- Nothing: what kept_task_outcomes holds (errors_as_failures and the runs), for the macro's check.
CREATE OR REPLACE TEMP TABLE kept_task_outcomes_for AS
SELECT $errors_as_failures::BOOLEAN AS kept_errors_as_failures, $run_ids::VARCHAR[] AS kept_run_ids;

-- name: serve_kept_task_outcomes() -> none
-- Nothing: a temporary task_outcomes_of, which DuckDB resolves before the database's own (the
-- temporary catalog comes first), also where views.sql's macros call it, answering from
-- kept_task_outcomes. It fails (error) when asked for another errors_as_failures or for a run
-- not kept, rather than answer with missing rows. run_no is numbered again among the runs asked
-- for, as current_attempts_of numbers them, since run_curve_of joins the two on it.
CREATE OR REPLACE TEMP MACRO task_outcomes_of(errors_as_failures, run_ids := NULL) AS TABLE
WITH numbered AS (
    SELECT run_id, row_number() OVER (ORDER BY run_id) AS run_no
    FROM runs
    WHERE run_ids IS NULL OR list_contains(run_ids, run_id)
),
-- one row, checked once
kept AS (
    SELECT CASE WHEN k.kept_errors_as_failures = errors_as_failures
                     AND list_has_all(k.kept_run_ids, (SELECT coalesce(list(run_id), []) FROM numbered))
                THEN true
                ELSE error('task_outcomes_of: asked for outcomes this report did not keep') END AS ok
    FROM temp.main.kept_task_outcomes_for k
)
SELECT o.* REPLACE (n.run_no AS run_no)
FROM temp.main.kept_task_outcomes o
JOIN numbered n USING (run_id)
WHERE (SELECT ok FROM kept);

-- name: drop_kept_task_outcomes() -> none
-- Nothing: the database's own task_outcomes_of answers again; the kept tables are dropped.
DROP MACRO TABLE IF EXISTS temp.main.task_outcomes_of;
DROP TABLE IF EXISTS temp.main.kept_task_outcomes;
DROP TABLE IF EXISTS temp.main.kept_task_outcomes_for;

-- name: session_task_outcomes() -> scalar
-- How many task_outcomes_of macros the session's temporary catalog holds: 1 in a lake's
-- session, whose views and macros all live there, or while a report keeps its outcomes.
SELECT count(*) FROM duckdb_functions()
WHERE function_name = 'task_outcomes_of' AND database_name = 'temp';
