-- The tasks table: a run's registered tasks, by index and identity.

-- name: insert_tasks(run_id, rows) -> none
-- Registers a run's tasks from $rows, a JSON array of {task_index, task_id, prompt, content_hash,
-- meta} (meta: a JSON text); returns nothing. One JSON string, parsed by DuckDB, is faster than
-- an Arrow table for a few thousand tasks and spares a run's start the import of pyarrow.
INSERT INTO tasks (run_id, task_index, task_id, prompt, content_hash, meta)
SELECT $run_id, t.task_index, t.task_id, t.prompt, t.content_hash, t.meta
FROM (SELECT UNNEST(from_json($rows, '[{"task_index": "INTEGER", "task_id": "VARCHAR",
      "prompt": "VARCHAR", "content_hash": "VARCHAR", "meta": "VARCHAR"}]')) AS t);

-- name: get_task_identities(run_id) -> tuples
-- (task_index, task_id, content_hash) of the tasks a run has registered.
SELECT task_index, task_id, content_hash FROM tasks WHERE run_id = $run_id ORDER BY task_index;

-- name: find_task(run_id, task_index, task_id) -> rows
-- (task_index, task_id, prompt, meta) of a run's task chosen by index or by id.
SELECT task_index, task_id, prompt, meta
FROM tasks
WHERE run_id = $run_id AND (task_index = $task_index OR task_id = $task_id);
