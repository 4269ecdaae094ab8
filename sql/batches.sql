-- name: insert_batch(batch_key, run_id, generation, provider, api_base, model, role, round, n_items, at) -> none
-- Records a batch about to be submitted (state 'submitting', no provider id yet): written before
-- the provider is called, so a crash between the two leaves a row to look the batch up by.
INSERT INTO batches (batch_key, run_id, generation, provider, api_base, model, batch_id, role, round,
                     n_items, state, n_done, submitted_at, updated_at, finished_at)
VALUES ($batch_key, $run_id, $generation, $provider, $api_base, $model, NULL, $role, $round,
        $n_items, 'submitting', 0, $at, $at, NULL);

-- name: insert_batch_items(batch_key, custom_ids, run_id, generation, task_indices, attempt_indices, roles, prompt_sha256s) -> none
-- Records every item of a batch (the lists zip, one item per position) with the slot it answers.
INSERT INTO batch_items (batch_key, custom_id, run_id, generation, task_index, chain_index,
                         attempt_index, role, prompt_sha256)
SELECT $batch_key, unnest($custom_ids), $run_id, $generation, unnest($task_indices), 1,
       unnest($attempt_indices), unnest($roles), unnest($prompt_sha256s);

-- name: set_batch_state(batch_id, state, n_done, at, finished_at, batch_key) -> none
-- Records what the provider said of a batch: its id (kept once known), state, items done.
UPDATE batches
SET batch_id = coalesce($batch_id, batch_id), state = $state, n_done = coalesce($n_done, n_done),
    updated_at = $at, finished_at = coalesce($finished_at, finished_at)
WHERE batch_key = $batch_key;

-- name: run_batch_items(run_id, generation) -> rows
-- Every batch item of a run's generation with its batch (oldest batch first): custom_id, slot
-- (task_index, attempt_index, role), prompt_sha256, and the batch's key, provider id, provider,
-- api_base, model, state and submitted_at.
SELECT i.custom_id, i.task_index, i.attempt_index, i.role, i.prompt_sha256,
       b.batch_key, b.batch_id, b.provider, b.api_base, b.model, b.state, b.n_items, b.submitted_at
FROM batch_items i
JOIN batches b USING (batch_key)
WHERE i.run_id = $run_id AND i.generation = $generation
ORDER BY b.submitted_at, b.batch_key, i.custom_id;

-- name: list_batches(run_ids) -> rows
-- The batches of the given runs (all of them when run_ids is NULL), newest first: run_id, role,
-- round, provider, batch_id, n_items, n_done, state, submitted_at, updated_at, finished_at and
-- age_s (seconds from submission to now, or to the end for a finished batch).
SELECT run_id, role, round, provider, batch_id, n_items, n_done, state, submitted_at, updated_at,
       finished_at,
       epoch(coalesce(finished_at, (now() AT TIME ZONE 'UTC')::TIMESTAMP) - submitted_at) AS age_s
FROM batches
WHERE $run_ids IS NULL OR list_contains($run_ids, run_id)
ORDER BY submitted_at DESC, batch_key;
