-- name: append_attempt_batch() -> none
-- Appends every row of the Arrow table the writer registered as seqk_attempt_batch (columns by
-- name) to attempts; returns nothing.
INSERT INTO attempts BY NAME SELECT * FROM seqk_attempt_batch;
