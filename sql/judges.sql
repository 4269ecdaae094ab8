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
