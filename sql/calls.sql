-- name: append_call_batch() -> none
-- Appends every row of the Arrow table the writer registered as seqk_call_batch (columns by
-- name) to calls; returns nothing.
INSERT INTO calls BY NAME SELECT * FROM seqk_call_batch;
