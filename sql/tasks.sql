-- The tasks table: a run's registered tasks, by index and identity.

-- name: append_task_batch() -> none
-- Appends every row of the Arrow table the writer registered as seqk_task_batch (columns by
-- name) to tasks; returns nothing.
INSERT INTO tasks BY NAME SELECT * FROM seqk_task_batch;

-- name: get_task_identities(run_id) -> tuples
-- (task_index, task_id, content_hash) of the tasks a run has registered.
SELECT task_index, task_id, content_hash FROM tasks WHERE run_id = $run_id ORDER BY task_index;

-- name: find_task(run_id, task_index, task_id) -> rows
-- (task_index, task_id, prompt, meta) of a run's task chosen by index or by id.
SELECT task_index, task_id, prompt, meta
FROM tasks
WHERE run_id = $run_id AND (task_index = $task_index OR task_id = $task_id);
