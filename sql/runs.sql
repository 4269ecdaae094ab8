-- The runs table: a run registered, imported, extended (continue: true), restarted in a
-- new generation, touched, listed; and what a restart would discard.

-- name: get_run(run_id) -> one
-- The run's row (all columns of runs), or nothing.
SELECT * FROM runs WHERE run_id = $run_id;

-- name: list_runs() -> rows
-- Every run: run_id, benchmark, metric, k, generation, actor_model, feedback_mode, updated_at.
SELECT run_id, benchmark, metric, k, generation, actor_model, feedback_mode, updated_at
FROM runs ORDER BY run_id;

-- name: insert_run(run_id, benchmark, slice, metric, k, chains, feedback_mode, actor_model, judge_model, critic_model, verifier, temperature, options, config, fingerprint, fingerprint_fields, seqk_version, shows_grading_info, soft_score_clipped) -> none
-- Registers a new run; returns nothing.
INSERT INTO run_rows (run_id, benchmark, slice, metric, k, chains, generation, feedback_mode, actor_model,
                  judge_model, critic_model, verifier, temperature, options, config, fingerprint,
                  fingerprint_fields, created_at, updated_at, seqk_version, shows_grading_info,
                  soft_score_clipped)
VALUES ($run_id, $benchmark, $slice, $metric, $k, $chains, 1, $feedback_mode, $actor_model,
        $judge_model, $critic_model, $verifier, $temperature, $options, $config, $fingerprint,
        $fingerprint_fields, now()::TIMESTAMP, now()::TIMESTAMP, $seqk_version, $shows_grading_info,
        $soft_score_clipped);

-- name: import_run(run_id, benchmark, slice, metric, k, generation, feedback_mode, actor_model, judge_model, critic_model, verifier, temperature, options, config, fingerprint, fingerprint_fields, created_at, updated_at, seqk_version, shows_grading_info, soft_score_clipped) -> none
-- Registers a run read from a folder tree, every column given; returns nothing.
INSERT INTO run_rows (run_id, benchmark, slice, metric, k, generation, feedback_mode, actor_model,
                  judge_model, critic_model, verifier, temperature, options, config, fingerprint,
                  fingerprint_fields, created_at, updated_at, seqk_version, shows_grading_info,
                  soft_score_clipped)
VALUES ($run_id, $benchmark, $slice, $metric, $k, $generation, $feedback_mode, $actor_model,
        $judge_model, $critic_model, $verifier, $temperature, $options, $config, $fingerprint,
        $fingerprint_fields, $created_at, $updated_at, $seqk_version, $shows_grading_info,
        $soft_score_clipped);

-- name: extend_run(run_id, k, config) -> none
-- Raises k and keeps every attempt (continue: true), as an appended run event; returns nothing.
INSERT INTO run_events (run_id, event, k, generation, config, event_at)
VALUES ($run_id, 'extend', $k, NULL, $config, now()::TIMESTAMP);

-- name: restart_run(run_id, k, generation, config) -> none
-- Starts generation `generation` at a larger k, as an appended run event; old rows stay but no
-- longer count. The new generation is given, not computed, so that two processes restarting
-- one run at once agree on it. Returns nothing.
INSERT INTO run_events (run_id, event, k, generation, config, event_at)
VALUES ($run_id, 'restart', $k, $generation, $config, now()::TIMESTAMP);

-- name: generation_paid(run_id, generation) -> rows
-- What the attempts of one generation of a run paid, as a restart would discard it:
-- n_attempts (every attempt row, errors included), cost_usd (the priced calls' sum; NULL when
-- no call was priced), n_unpriced_calls (calls that returned tokens but have no price),
-- input_tokens and output_tokens (every call).
SELECT (SELECT count(*) FROM attempts WHERE run_id = $run_id AND generation = $generation) AS n_attempts,
       exact_sum(cost_usd) AS cost_usd,
       n_unpriced_calls(cost_usd, error) AS n_unpriced_calls,
       coalesce(sum(input_tokens), 0) AS input_tokens,
       coalesce(sum(output_tokens), 0) AS output_tokens
FROM calls
WHERE run_id = $run_id AND generation = $generation;

-- name: touch_run(run_id) -> none
-- Marks the run as updated now, as an appended run event; returns nothing.
INSERT INTO run_events (run_id, event, k, generation, config, event_at)
VALUES ($run_id, 'touch', NULL, NULL, NULL, now()::TIMESTAMP);

-- name: add_run_chains(run_id, config, chains) -> none
-- Raises a seq@k run's chains (kept attempts count, like tasks added), as an appended run event;
-- returns nothing.
INSERT INTO run_events (run_id, event, k, generation, config, event_at, chains)
VALUES ($run_id, 'chains', NULL, NULL, $config, now()::TIMESTAMP, $chains);
