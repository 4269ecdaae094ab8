-- name: append_task_batch() -> none
-- Appends every row of the Arrow table the writer registered as seqk_task_batch (columns by
-- name) to tasks; returns nothing.
INSERT INTO tasks BY NAME SELECT * FROM seqk_task_batch;
