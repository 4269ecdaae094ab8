-- Judges: a re-judging run's slots linked to the answers it judges again, what is left to
-- judge, the run it re-judged, and two judges' agreement on the same answers.

-- name: link_rejudged_slots(k, run_id, source_run_id) -> none
-- Links each slot (attempt_index <= $k) of a re-judging run not linked yet to the source run's
-- attempt that counts in that slot, when it has an actor output (an answer whose judge failed
-- is judged too; an attempt whose actor failed has nothing to judge). Returns nothing. (NOT
-- EXISTS, not ON CONFLICT: a lake's tables have no key to conflict on.)
INSERT INTO rejudged_slots (run_id, task_index, attempt_index, source_run_id, source_attempt_uid)
SELECT $run_id, a.task_index, a.attempt_index, a.run_id, a.attempt_uid
FROM current_attempts_of(run_ids := [$source_run_id]) c JOIN attempts a USING (attempt_uid)
WHERE a.run_id = $source_run_id AND a.output IS NOT NULL AND a.attempt_index <= $k
  AND a.chain_index = 1
  AND NOT EXISTS (SELECT 1 FROM rejudged_slots l
                  WHERE l.run_id = $run_id AND l.task_index = a.task_index
                    AND l.attempt_index = a.attempt_index);

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

-- name: judge_agreement(run_a, run_b) -> tuples
-- Two runs' verdicts on identical answers: slots valid in both whose answer is the same source
-- attempt (a re-judged slot's answer is its source attempt; any other slot's is itself).
-- Returns one row: n, both_pass, a_only (run A passed, B failed), b_only, both_fail.
WITH answers AS (
    SELECT a.run_id, a.success, coalesce(l.source_attempt_uid, a.attempt_uid) AS answer_uid
    FROM current_attempts_of(run_ids := [$run_a, $run_b]) a
    LEFT JOIN rejudged_slots l
           ON l.run_id = a.run_id AND l.task_index = a.task_index AND l.attempt_index = a.attempt_index
    WHERE a.run_id IN ($run_a, $run_b) AND a.status = 'ok'
)
SELECT count(*)                                       AS n,
       count(*) FILTER (WHERE x.success AND y.success)         AS both_pass,
       count(*) FILTER (WHERE x.success AND NOT y.success)     AS a_only,
       count(*) FILTER (WHERE NOT x.success AND y.success)     AS b_only,
       count(*) FILTER (WHERE NOT x.success AND NOT y.success) AS both_fail
FROM answers x
JOIN answers y ON x.answer_uid = y.answer_uid
WHERE x.run_id = $run_a AND y.run_id = $run_b;
