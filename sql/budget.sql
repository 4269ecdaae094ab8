-- name: run_spend_by_role(run_id) -> tuples
-- Per role, what a run has spent over all its generations (a restart does not refund what the
-- old attempts cost): role, cost_usd (calls of unknown price count 0), and n_attempts, the
-- attempts of the run with at least one call (the same on every row).
SELECT c.role,
       coalesce(sum(c.cost_usd), 0.0) AS cost_usd,
       (SELECT count(DISTINCT attempt_uid) FROM calls WHERE run_id = $run_id) AS n_attempts
FROM calls c
WHERE c.run_id = $run_id
GROUP BY c.role
ORDER BY c.role;
