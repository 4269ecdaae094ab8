-- The tasks table: a run's registered tasks, by index and identity.

-- name: insert_tasks(run_id, columns) -> none
-- Registers a run's tasks from $columns, a JSON object of equal-length arrays task_index, task_id,
-- prompt, content_hash and meta (meta: JSON texts); returns nothing. One JSON string parsed by
-- DuckDB spares a run's start the import of pyarrow; read through a subquery, it is parsed when
-- the statement runs, vectorised, not folded as a constant into a value per cell while planning
-- (2.5 times the CPU for 100,000 tasks).
INSERT INTO tasks (run_id, task_index, task_id, prompt, content_hash, meta)
SELECT $run_id, UNNEST(c.task_index), UNNEST(c.task_id), UNNEST(c.prompt), UNNEST(c.content_hash), UNNEST(c.meta)
FROM (SELECT from_json(j, '{"task_index": "INTEGER[]", "task_id": "VARCHAR[]", "prompt": "VARCHAR[]",
      "content_hash": "VARCHAR[]", "meta": "VARCHAR[]"}') AS c FROM (SELECT $columns AS j));

-- name: get_task_identities(run_id) -> tuples
-- (task_index, task_id, content_hash) of the tasks a run has registered.
SELECT task_index, task_id, content_hash FROM tasks WHERE run_id = $run_id ORDER BY task_index;

-- name: find_task(run_id, task_index, task_id) -> rows
-- (task_index, task_id, prompt, meta) of a run's task chosen by index or by id.
SELECT task_index, task_id, prompt, meta
FROM tasks
WHERE run_id = $run_id AND (task_index = $task_index OR task_id = $task_id);
