-- name: get_run(run_id) -> one
-- The run's row (all columns of runs), or nothing.
SELECT * FROM runs WHERE run_id = $run_id;

-- name: insert_run(run_id, benchmark, slice, metric, k, chains, feedback_mode, actor_model, judge_model, critic_model, verifier, temperature, options, config, fingerprint, fingerprint_fields, seqk_version, shows_grading_info) -> none
-- Registers a new run; returns nothing.
INSERT INTO runs (run_id, benchmark, slice, metric, k, chains, generation, feedback_mode,
                  actor_model, judge_model, critic_model, verifier, temperature, options, config,
                  fingerprint, fingerprint_fields, created_at, updated_at, seqk_version,
                  shows_grading_info)
VALUES ($run_id, $benchmark, $slice, $metric, $k, $chains, 1, $feedback_mode, $actor_model,
        $judge_model, $critic_model, $verifier, $temperature, $options, $config, $fingerprint,
        $fingerprint_fields, now()::TIMESTAMP, now()::TIMESTAMP, $seqk_version, $shows_grading_info);

-- name: extend_run(k, config, run_id) -> none
-- Raises k and keeps every attempt (continue: true); returns nothing.
UPDATE runs SET k = $k, config = $config, updated_at = now()::TIMESTAMP WHERE run_id = $run_id;

-- name: restart_run(k, config, run_id) -> none
-- Starts a new generation at a larger k; old rows stay but no longer count. Returns nothing.
UPDATE runs
SET k = $k, generation = generation + 1, config = $config, updated_at = now()::TIMESTAMP
WHERE run_id = $run_id;

-- name: set_run_chains(chains, config, run_id) -> none
-- Raises a seq@k run's chains (kept attempts count, like tasks added); returns nothing.
UPDATE runs SET chains = $chains, config = $config, updated_at = now()::TIMESTAMP
WHERE run_id = $run_id;

-- name: touch_run(run_id) -> none
-- Marks the run as updated now; returns nothing.
UPDATE runs SET updated_at = now()::TIMESTAMP WHERE run_id = $run_id;

-- name: list_runs() -> rows
-- Every run: run_id, benchmark, metric, k, generation, actor_model, feedback_mode, updated_at.
SELECT run_id, benchmark, metric, k, generation, actor_model, feedback_mode, updated_at
FROM runs ORDER BY run_id;

-- name: get_task_identities(run_id) -> tuples
-- (task_index, task_id, content_hash) of the tasks a run has registered.
SELECT task_index, task_id, content_hash FROM tasks WHERE run_id = $run_id ORDER BY task_index;
