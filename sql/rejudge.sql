-- name: link_rejudged_slots(run_id, source_run_id, k) -> none
-- Links each slot (chain 1, attempt_index <= $k: a re-judging run has one chain) of a
-- re-judging run not linked yet to the source run's
-- attempt that counts in that slot, when it has an actor output (an answer whose judge failed
-- is judged too; an attempt whose actor failed has nothing to judge). Returns nothing.
INSERT INTO rejudged_slots (run_id, task_index, attempt_index, source_run_id, source_attempt_uid)
SELECT $run_id, a.task_index, a.attempt_index, a.run_id, a.attempt_uid
FROM current_attempts_of(run_ids := [$source_run_id]) c JOIN attempts a USING (attempt_uid)
WHERE a.run_id = $source_run_id AND a.output IS NOT NULL AND a.attempt_index <= $k
  AND a.chain_index = 1
ON CONFLICT DO NOTHING;

-- name: rejudge_pending(run_id, generation) -> rows
-- The linked slots of a re-judging run that have no valid attempt in its current generation,
-- with the source answer: task_index, attempt_index, source_attempt_uid, prompt, output.
SELECT l.task_index, l.attempt_index, l.source_attempt_uid, s.prompt, s.output
FROM rejudged_slots l
JOIN attempts s ON s.attempt_uid = l.source_attempt_uid
WHERE l.run_id = $run_id
  AND NOT EXISTS (
      SELECT 1 FROM attempts a
      WHERE a.run_id = l.run_id AND a.generation = $generation AND a.status = 'ok'
        AND a.task_index = l.task_index AND a.attempt_index = l.attempt_index)
ORDER BY l.task_index, l.attempt_index;

-- name: rejudge_source(run_id) -> tuples
-- The run a re-judging run grades again (NULL for any other run): source_run_id.
SELECT json_extract_string(config, '$.rejudge_of') AS source_run_id FROM runs WHERE run_id = $run_id;
