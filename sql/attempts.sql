-- The attempts table: what a run still has to do (pending), what the next seq@k prompt
-- shows (history), outputs kept for a judge retry, late feedback, one task's attempts,
-- and the checks an import makes before appending.

-- name: append_attempt_batch() -> none
-- Appends every row of the Arrow table the writer registered as seqk_attempt_batch (columns by
-- name) to attempts; returns nothing.
INSERT INTO attempts BY NAME SELECT * FROM seqk_attempt_batch;

-- name: stored_attempt_uids(uids) -> tuples
-- Which of $uids (a JSON array of attempt_uid texts) the store holds: what the writer asks before it
-- writes again a commit whose write failed in a way that may have committed all the same (a lake's
-- catalog connection lost as its COMMIT went out), so that no attempt is written twice.
SELECT attempt_uid FROM attempts
WHERE attempt_uid IN (SELECT UNNEST(from_json($uids, '["VARCHAR"]')));

-- name: pending_attempts(task_indices, run_id, generation, chains, k, is_seq) -> tuples
-- (task_index, chain_index, attempt_index) still to run for the selected tasks of one run, in
-- order. pass@k: every sample index in 1..k of chain 1 that has no valid attempt (errors are
-- redone). seq@k: for each chain 1..chains, the one attempt after its valid prefix, unless a
-- valid attempt of that chain succeeded or k is reached.
WITH selected AS (
    -- $task_indices is int_list's text, a JSON array: parsed from a subquery as the statement
    -- runs, not cast as a constant while planning (a list of 100,000 values cost twice the time).
    SELECT UNNEST(from_json(t, '["INTEGER"]')) AS task_index FROM (SELECT $task_indices AS t)
),
valid AS (
    SELECT task_index, chain_index, attempt_index, success
    FROM attempts
    WHERE run_id = $run_id AND generation = $generation AND status = 'ok'
),
seq_state AS (
    -- seq@k writes attempt t+1 only after a valid attempt t, so the valid rows
    -- of a chain are exactly 1..n_valid.
    SELECT s.task_index, c.chain_index::INTEGER AS chain_index,
           count(v.attempt_index) AS n_valid,
           coalesce(bool_or(v.success), false) AS solved
    FROM selected s CROSS JOIN range(1, $chains + 1) AS c(chain_index)
    LEFT JOIN valid v ON v.task_index = s.task_index AND v.chain_index = c.chain_index
    GROUP BY s.task_index, c.chain_index
)
SELECT task_index, chain_index, attempt_index FROM (
    SELECT s.task_index, 1 AS chain_index, g.attempt_index::INTEGER AS attempt_index
    FROM selected s CROSS JOIN range(1, $k + 1) AS g(attempt_index)
    WHERE NOT $is_seq
      AND NOT EXISTS (
          SELECT 1 FROM valid v
          WHERE v.task_index = s.task_index AND v.attempt_index = g.attempt_index)
    UNION ALL
    SELECT task_index, chain_index, (n_valid + 1)::INTEGER
    FROM seq_state
    WHERE $is_seq AND NOT solved AND n_valid < $k
)
ORDER BY task_index, chain_index, attempt_index;

-- name: seq_history(run_id, generation, task_indices) -> rows
-- The valid attempts of the given tasks, by chain and in order: what the next seq@k prompt of
-- each chain shows, with the verdict and uid so a failed attempt whose critic failed can get
-- its feedback written later. (IN over the unnested list is a hash join; list_contains would
-- scan the list for every attempt: 7 s for 200,000 attempts of 100,000 tasks. The list is
-- parsed as in pending_attempts.)
SELECT task_index, attempt_index, output, feedback, attempt_uid, success, score,
       raw_eval_output, judge_details, chain_index
FROM attempts_filled
WHERE run_id = $run_id AND generation = $generation AND status = 'ok'
  AND task_index IN (SELECT UNNEST(from_json(t, '["INTEGER"]')) FROM (SELECT $task_indices AS t))
ORDER BY task_index, chain_index, attempt_index;

-- name: kept_outputs(run_id, generation, task_indices) -> tuples
-- (task_index, chain_index, attempt_index, prompt, output, k) of the selected tasks' slots that have no valid
-- row and whose latest row is a judge-stage error that kept the actor's output: the next run asks
-- the judge again on that output instead of sampling the actor anew (re-rolling the actor until
-- the judge parses would bias success upward). k is the K the kept prompt was built with.
SELECT task_index, chain_index, attempt_index, prompt, output, k FROM (
    SELECT task_index, chain_index, attempt_index, status, error->>'stage' AS stage, prompt, output, k
    FROM attempts
    WHERE run_id = $run_id AND generation = $generation
      AND task_index IN (SELECT UNNEST(from_json(t, '["INTEGER"]')) FROM (SELECT $task_indices AS t))  -- as in seq_history
    QUALIFY row_number() OVER (
        PARTITION BY task_index, chain_index, attempt_index
        ORDER BY (status = 'ok') DESC, finished_at DESC
    ) = 1
)
WHERE status = 'error' AND stage = 'judge' AND output IS NOT NULL
ORDER BY task_index, chain_index, attempt_index;

-- name: fill_feedback(attempt_uid, feedback, error) -> none
-- Writes the feedback of a valid, failed attempt whose critic had failed, once a retried critic
-- produced it (or records the new failure), appended to feedback_fills (attempts_filled applies
-- the latest). Returns nothing.
INSERT INTO feedback_fills (attempt_uid, feedback, error, filled_at)
VALUES ($attempt_uid, $feedback, $error, now()::TIMESTAMP);

-- name: task_attempts(run_id, task_index) -> rows
-- Every attempt row of one task in the run's current generation, superseded errors included,
-- by chain and in attempt order; `counts` says whether it is the row the metrics use.
SELECT a.attempt_uid, a.attempt_index, a.k, a.status, a.success, a.score, a.prompt, a.output,
       a.raw_eval_output, a.judge_details, a.feedback, a.error, a.started_at, a.finished_at,
       a.chain_index,
       a.attempt_uid IN (SELECT attempt_uid FROM current_attempts_of(run_ids := [$run_id])
                         WHERE task_index = $task_index) AS counts
FROM attempts_filled a JOIN runs r ON a.run_id = r.run_id AND a.generation = r.generation
WHERE a.run_id = $run_id AND a.task_index = $task_index
ORDER BY a.chain_index, a.attempt_index, a.finished_at;

-- name: import_known_attempts(run_id) -> tuples
-- The attempt_uid of every attempt row a run already has (any generation).
SELECT attempt_uid FROM attempts WHERE run_id = $run_id;

-- name: import_valid_slots(run_id) -> tuples
-- (generation, task_index, attempt_index) of every valid chain-1 attempt a run already has (a
-- folder tree holds chain 1): a slot holds one valid attempt, so an imported one for a filled
-- slot is skipped.
SELECT generation, task_index, attempt_index FROM attempts
WHERE run_id = $run_id AND status = 'ok' AND chain_index = 1;
