-- Views over the append-only tables. Executed whole on every read-write open
-- (CREATE OR REPLACE), so a newer seqk upgrades them in place; over a lake, executed into
-- each session's temporary catalog and never stored in the lake.

-- Each run as it is now: its registered row (the first, should two processes have registered
-- it at once), with k and generation raised by its run events (both only grow, so the largest
-- wins whatever order concurrent writers appended them in) and the latest config and time.
CREATE OR REPLACE VIEW runs AS
WITH registered AS (
    SELECT * FROM run_rows
    QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY created_at, fingerprint) = 1
),
events AS (
    SELECT run_id, max(k) AS k, max(generation) AS generation, max(chains) AS chains,
           arg_max(config, event_at) FILTER (WHERE config IS NOT NULL) AS config,
           max(event_at) AS event_at
    FROM run_events GROUP BY run_id
)
SELECT r.* REPLACE (greatest(r.k, coalesce(e.k, r.k)) AS k,
                    greatest(r.generation, coalesce(e.generation, r.generation)) AS generation,
                    greatest(r.chains, coalesce(e.chains, r.chains)) AS chains,
                    coalesce(e.config, r.config) AS config,
                    greatest(r.updated_at, coalesce(e.event_at, r.updated_at)) AS updated_at)
FROM registered r LEFT JOIN events e USING (run_id);

-- Every attempt row once (a lake has no primary key: a batch written twice after an ambiguous
-- commit shows once; see current_attempts_of), with the latest late feedback (feedback_fills)
-- applied.
CREATE OR REPLACE VIEW attempts_filled AS
SELECT a.* REPLACE (CASE WHEN f.attempt_uid IS NULL THEN a.feedback ELSE f.feedback END AS feedback,
                    CASE WHEN f.attempt_uid IS NULL THEN a.error ELSE f.error END AS error)
FROM (SELECT * FROM attempts
--lake-only: QUALIFY row_number() OVER (PARTITION BY run_id, attempt_uid ORDER BY finished_at) = 1
     ) a
LEFT JOIN (SELECT attempt_uid, feedback, error FROM feedback_fills
           QUALIFY row_number() OVER (PARTITION BY attempt_uid ORDER BY filled_at DESC) = 1) f
       USING (attempt_uid);

-- The attempt that counts in each slot (run, task, chain, attempt_index) of a run's current
-- generation: the valid row if there is one, else the latest error. The one definition of
-- it; every query that reads attempts that count calls it with the runs it needs, so one
-- run's status or export does not rank the whole database. A slot holds at most one valid
-- row (the engine only redoes slots without one), so every valid row counts and only the
-- few error rows need ranking. It returns only the few columns metrics read, plus the
-- attempt_uid to join the rest from attempts: carrying whole rows (prompts, outputs)
-- through the union makes a million-attempt report twice as slow. run_no is the run's
-- position in run_id order among the chosen runs: a compact key for grouping, not stable
-- across databases.
CREATE OR REPLACE MACRO current_attempts_of(run_ids := NULL) AS TABLE
WITH numbered AS (
    SELECT run_id, generation, row_number() OVER (ORDER BY run_id) AS run_no
    FROM runs
    WHERE run_ids IS NULL OR list_contains(run_ids, run_id)
)
SELECT a.attempt_uid, a.run_id, r.run_no, a.task_index, a.chain_index, a.attempt_index, a.status,
       a.success, a.score, a.finished_at
FROM attempts a
JOIN numbered r ON a.run_id = r.run_id AND a.generation = r.generation
WHERE a.status = 'ok'
-- A lake has no primary key: a batch written twice (a commit that succeeded but reported
-- failure, then retried) must still count once. A DuckDB file's key on attempt_uid rules that
-- out, and this ranking doubles the memory of a million-attempt report, so only a lake's
-- session (seqk/store/lake.py temp_views) turns the next line on.
--lake-only: QUALIFY row_number() OVER (PARTITION BY a.attempt_uid ORDER BY a.finished_at) = 1
UNION ALL
SELECT attempt_uid, run_id, run_no, task_index, chain_index, attempt_index, status, success, score,
       finished_at
FROM (
    SELECT e.attempt_uid, e.run_id, r.run_no, e.task_index, e.chain_index, e.attempt_index, e.status,
           e.success, e.score, e.finished_at
    FROM attempts e
    JOIN numbered r ON e.run_id = r.run_id AND e.generation = r.generation
    WHERE e.status <> 'ok'
      AND NOT EXISTS (SELECT 1 FROM attempts v
                      WHERE v.status = 'ok' AND v.run_id = e.run_id
                        AND v.generation = e.generation AND v.task_index = e.task_index
                        AND v.chain_index = e.chain_index AND v.attempt_index = e.attempt_index)
    QUALIFY row_number() OVER (PARTITION BY e.run_id, e.task_index, e.chain_index, e.attempt_index
                               ORDER BY e.finished_at DESC, e.attempt_uid DESC) = 1
);

-- The whole attempts row that counts in each slot, for every run (late feedback applied).
CREATE OR REPLACE VIEW current_attempts AS
SELECT a.* FROM current_attempts_of() c JOIN attempts_filled a USING (attempt_uid);

-- Every call of the current generation, whatever its attempt's fate: what was paid for.
CREATE OR REPLACE VIEW current_calls AS
SELECT c.*
FROM calls c
JOIN runs r ON c.run_id = r.run_id AND c.generation = r.generation;

-- How many of the calls aggregated are unpriced: they returned (no error) but have no cost,
-- their model's price being unknown. A cost summed over calls is then a lower bound; a failed
-- call has no tokens to price, so it does not count. The one statement of that rule.
CREATE OR REPLACE MACRO n_unpriced_calls(cost_usd, error) AS
    count(*) FILTER (WHERE cost_usd IS NULL AND error IS NULL);

-- One row per (run, task) that has at least one attempt, of the given runs (NULL: all), its
-- chains together: solved when any chain is; n_chains_finished counts the chains done (k valid
-- attempts, or a seq@k chain solved), the task being finished when all runs.chains are.
CREATE OR REPLACE MACRO task_progress_of(run_ids := NULL) AS TABLE
WITH chains AS (
    SELECT
        run_id,
        task_index,
        chain_index,
        count(*) FILTER (WHERE status = 'ok')                 AS n_valid,
        count(*) FILTER (WHERE status = 'error')              AS n_error,
        coalesce(bool_or(success) FILTER (WHERE status = 'ok'), false) AS solved,
        min(attempt_index) FILTER (WHERE status = 'ok' AND success) AS first_success_index,
        max(finished_at)                                      AS last_finished_at
    FROM current_attempts_of(run_ids := run_ids)
    GROUP BY run_id, task_index, chain_index
)
SELECT
    c.run_id,
    c.task_index,
    sum(c.n_valid)::BIGINT                                AS n_valid,
    sum(c.n_error)::BIGINT                                AS n_error,
    bool_or(c.solved)                                     AS solved,
    min(c.first_success_index)                            AS first_success_index,
    max(c.last_finished_at)                               AS last_finished_at,
    count(*) FILTER (WHERE c.n_valid >= r.k OR (r.metric = 'seq@k' AND c.solved))
                                                          AS n_chains_finished
FROM chains c
JOIN runs r USING (run_id)
GROUP BY c.run_id, c.task_index;

-- task_progress_of for every run.
CREATE OR REPLACE VIEW task_progress AS SELECT * FROM task_progress_of();

-- ---------------------------------------------------------------------------
-- Metrics (seqk/analysis/metrics.py, seqk/analysis/report.py; every view is described in docs/views.md).
-- A task's outcome within t attempts is known when it was solved by attempt t, or when
-- attempts 1..t are all valid; otherwise the task is left out at t (and counted as left
-- out), never scored as a failure. The `*_of(...)` table macros take that switch
-- (errors_as_failures) and an optional list of run ids, applied where the attempts are
-- read so that one run's report does not pay for the whole database; the view of the
-- same name without `_of` is the default: errors excluded, every run.

-- Lower end of the 95% Wilson score interval for x successes out of n (x may be a sum of
-- per-task pass@t estimates); NULL when n = 0. Constants: z = 1.959963984540054, z²/2, z²/4, z².
CREATE OR REPLACE MACRO wilson_low(x, n) AS CASE WHEN n > 0 THEN greatest(0.0,
    (x / n + 1.920729410347062 / n
     - 1.959963984540054 * sqrt(greatest(0.0, (x / n) * (1 - x / n)) / n
                                + 0.960364705173531 / (n * n)))
    / (1 + 3.841458820694124 / n)) END;

-- Upper end of the 95% Wilson score interval; NULL when n = 0.
CREATE OR REPLACE MACRO wilson_high(x, n) AS CASE WHEN n > 0 THEN least(1.0,
    (x / n + 1.920729410347062 / n
     + 1.959963984540054 * sqrt(greatest(0.0, (x / n) * (1 - x / n)) / n
                                + 0.960364705173531 / (n * n)))
    / (1 + 3.841458820694124 / n)) END;

-- Chen et al.'s unbiased pass@t from n samples with c successes, 1 - C(n-c, t) / C(n, t),
-- written as a product so that it stays exact for large n; NULL when n < t.
CREATE OR REPLACE MACRO pass_at_t_unbiased(n, c, t) AS CASE
    WHEN t < 1 OR n < t THEN NULL
    WHEN n - c < t THEN 1.0::DOUBLE
    WHEN c = 0 THEN 0.0::DOUBLE
    ELSE 1.0 - list_product([1.0 - t / i FOR i IN range(n - c + 1, n + 1)]) END;

-- A mean score clipped to [0, 1] when `clip` (runs.soft_score_clipped: the benchmark clips
-- the mean, not each score, as HealthBench does), else as it is.
CREATE OR REPLACE MACRO clipped_if(clip, x) AS
    CASE WHEN clip THEN greatest(0.0, least(1.0, x)) ELSE x END;

-- pass^t: the unbiased probability that all of t samples drawn from n with c successes succeed,
-- C(c, t) / C(n, t), as a product; NULL when n < t.
CREATE OR REPLACE MACRO pass_all_t_unbiased(n, c, t) AS CASE
    WHEN t < 1 OR n < t THEN NULL
    WHEN c < t THEN 0.0::DOUBLE
    ELSE list_product([(c - i) / (n - i) FOR i IN range(0, t)]) END;

-- 1.0 if solved within the first t attempts (or samples), 0.0 if known to be unsolved
-- through t, NULL if unknown.
CREATE OR REPLACE MACRO first_t_outcome(first_success, known_to, t) AS
    CASE WHEN first_success <= t THEN 1.0::DOUBLE WHEN known_to >= t THEN 0.0::DOUBLE END;

-- A task's value for its run's metric at t: seq@k, first_t_outcome; pass@k, Chen's
-- estimate over all n_samples.
CREATE OR REPLACE MACRO metric_outcome(metric, n_samples, n_success, first_success, known_to, t) AS
    CASE WHEN metric = 'pass@k' THEN pass_at_t_unbiased(n_samples, n_success, t)
         ELSE first_t_outcome(first_success, known_to, t) END;

-- The columns of the attempts that count that metrics read, for every run.
CREATE OR REPLACE VIEW attempt_slots AS
SELECT run_id, run_no, task_index, chain_index, attempt_index, status, success, score
FROM current_attempts_of();

-- One row per (run, task, chain) with at least one attempt (chain_index is 1 but for a seq@k
-- run with `chains:`; chains: 1 gives one row per task): counts, the first success, how far its
-- slots are all valid (valid_prefix) or all valid-or-error (settled_prefix), whether the
-- last slot is an error; then the two figures errors_as_failures changes: n_samples (valid
-- attempts, plus errored ones as failures) and known_to (the last t through which an
-- unsolved task is known to be unsolved: the valid prefix; as failures, the settled prefix,
-- or K for a seq@k task that stopped on an error).
CREATE OR REPLACE MACRO task_outcomes_of(errors_as_failures, run_ids := NULL) AS TABLE
WITH o AS (
    SELECT any_value(s.run_id) AS run_id, s.task_index, s.chain_index, s.run_no,
           any_value(r.metric) AS metric, any_value(r.k) AS k, any_value(r.chains) AS chains,
           count(*)                                                         AS n_attempts,
           count(*) FILTER (WHERE s.status = 'ok')                           AS n_valid,
           count(*) FILTER (WHERE s.status = 'error')                        AS n_error,
           count(*) FILTER (WHERE s.status = 'ok' AND s.success)             AS n_success,
           min(s.attempt_index) FILTER (WHERE s.status = 'ok' AND s.success) AS first_success,
           -- Without holes (the usual case) the prefix is the count; pass@k samples finish
           -- out of order, so a run in progress can have holes.
           CASE WHEN count(*) FILTER (WHERE s.status = 'ok')
                     = coalesce(max(s.attempt_index) FILTER (WHERE s.status = 'ok'), 0)
                THEN count(*) FILTER (WHERE s.status = 'ok')
                ELSE len([x FOR x, i IN list_sort(list(s.attempt_index)
                                                  FILTER (WHERE s.status = 'ok')) IF x = i])
                END                                                         AS valid_prefix,
           CASE WHEN count(*) = max(s.attempt_index) THEN count(*)
                ELSE len([x FOR x, i IN list_sort(list(s.attempt_index)) IF x = i]) END
                                                                            AS settled_prefix,
           arg_max(s.status, s.attempt_index) = 'error'                     AS ended_in_error
    FROM current_attempts_of(run_ids := run_ids) s
    JOIN runs r USING (run_id)
    -- the run's number, not its id: grouping on an integer is markedly faster
    GROUP BY s.run_no, s.task_index, s.chain_index
)
SELECT *,
       n_valid + CASE WHEN errors_as_failures THEN n_error ELSE 0 END AS n_samples,
       CASE WHEN NOT errors_as_failures THEN valid_prefix
            WHEN metric = 'seq@k' AND ended_in_error THEN k
            ELSE settled_prefix END                                 AS known_to
FROM o;

-- task_outcomes_of with errors excluded, every run.
CREATE OR REPLACE VIEW task_outcomes AS SELECT * FROM task_outcomes_of(false);

-- task_outcomes_of(false, run_ids) in one pass over the attempts, for pages that need it fast
-- (the viewer): the same rows and columns but run_no. Each (run, task, chain) keeps three
-- bitmasks of attempt indexes: the slots it has, the valid ones, the solved ones; a slot with
-- a valid row counts as valid (as in current_attempts_of) and duplicate rows set the same bit,
-- so no ranking or anti-join is needed, and every count and prefix is a bit count. A BIGINT
-- holds 62 slots: runs with a larger k go through task_outcomes_of.
CREATE OR REPLACE MACRO task_outcomes_fast_of(run_ids := NULL) AS TABLE
WITH chosen AS (
    SELECT run_id, generation, metric, k, chains FROM runs
    WHERE run_ids IS NULL OR list_contains(run_ids, run_id)
),
masks AS (
    SELECT run_id, generation, task_index, chain_index,
           bit_or(1::BIGINT << (attempt_index - 1)) AS slots,
           coalesce(bit_or(CASE WHEN status = 'ok' THEN 1::BIGINT << (attempt_index - 1) END), 0)
               AS valid,
           coalesce(bit_or(CASE WHEN status = 'ok' AND success
                                THEN 1::BIGINT << (attempt_index - 1) END), 0) AS solved
    FROM attempts
    WHERE attempt_index <= 62 AND (run_ids IS NULL OR list_contains(run_ids, run_id))
    GROUP BY run_id, generation, task_index, chain_index
),
o AS (
    SELECT c.run_id, m.task_index, m.chain_index, c.metric, c.k, c.chains,
           bit_count(m.slots)::BIGINT                                   AS n_attempts,
           bit_count(m.valid)::BIGINT                                   AS n_valid,
           bit_count(xor(m.slots, m.valid))::BIGINT                     AS n_error,
           bit_count(m.solved)::BIGINT                                  AS n_success,
           -- the lowest set bit's position
           CASE WHEN m.solved <> 0 THEN bit_count((m.solved & -m.solved) - 1) + 1 END::INTEGER
                                                                        AS first_success,
           -- the trailing ones: x & ~(x + 1) keeps exactly them
           bit_count(m.valid & ~(m.valid + 1))::BIGINT                  AS valid_prefix,
           bit_count(m.slots & ~(m.slots + 1))::BIGINT                  AS settled_prefix,
           -- the last slot is errored when the error-only slots reach higher than the valid ones
           xor(m.slots, m.valid) > m.valid                              AS ended_in_error
    FROM masks m JOIN chosen c USING (run_id, generation)
    WHERE c.k <= 62
)
SELECT *, n_valid AS n_samples, valid_prefix AS known_to FROM o
UNION ALL BY NAME
SELECT * EXCLUDE (run_no)
FROM task_outcomes_of(false, run_ids := (SELECT coalesce(list(run_id), []) FROM chosen WHERE k > 62));

-- One row per run of the given runs (NULL: all): n_tasks registered; n_started, tasks with an
-- attempt that counts; n_finished, tasks whose every chain (runs.chains) is done: k valid
-- attempts, or a seq@k chain solved; n_passed, tasks with a valid success in any chain;
-- n_valid_attempts and n_error_attempts, the slots that count, valid or holding only errors;
-- last_finished_at, when its current generation's last attempt finished (NULL before any).
-- The one definition of a run's progress: `seqk status` and the viewer read it.
CREATE OR REPLACE MACRO run_progress_of(run_ids := NULL) AS TABLE
WITH tasks_done AS (
    SELECT run_id, task_index,
           count(*) FILTER (WHERE n_valid >= k OR (metric = 'seq@k' AND first_success IS NOT NULL))
               >= max(chains)                                   AS finished,
           bool_or(first_success IS NOT NULL)                   AS passed,
           sum(n_valid)                                         AS n_valid,
           sum(n_error)                                         AS n_error
    FROM task_outcomes_fast_of(run_ids := run_ids)
    GROUP BY run_id, task_index
),
registered AS (
    SELECT run_id, count(*) AS n_tasks FROM tasks
    WHERE run_ids IS NULL OR list_contains(run_ids, run_id)
    GROUP BY run_id
),
latest AS (
    SELECT a.run_id, max(a.finished_at) AS last_finished_at
    FROM attempts a JOIN runs r ON r.run_id = a.run_id AND r.generation = a.generation
    WHERE run_ids IS NULL OR list_contains(run_ids, a.run_id)
    GROUP BY a.run_id
)
SELECT r.run_id,
       coalesce(any_value(g.n_tasks), 0)                  AS n_tasks,
       count(t.task_index)                                AS n_started,
       count(*) FILTER (WHERE t.finished)                 AS n_finished,
       count(*) FILTER (WHERE t.passed)                   AS n_passed,
       coalesce(sum(t.n_valid), 0)::BIGINT                AS n_valid_attempts,
       coalesce(sum(t.n_error), 0)::BIGINT                AS n_error_attempts,
       any_value(l.last_finished_at)                      AS last_finished_at
FROM runs r
LEFT JOIN registered g USING (run_id)
LEFT JOIN tasks_done t USING (run_id)
LEFT JOIN latest l USING (run_id)
WHERE run_ids IS NULL OR list_contains(run_ids, r.run_id)
GROUP BY r.run_id;

-- run_progress_of for every run.
CREATE OR REPLACE VIEW run_progress AS SELECT * FROM run_progress_of();

-- One row per (run, task, t), t = 1..K. value: the task's outcome for its run's metric at t
-- (seq@k: 1/0 solved within the first t attempts; pass@k: Chen's unbiased estimate over all
-- its samples), NULL when the task is left out at t. first_t_value: 1/0 solved within the
-- first t attempts or samples (seq_k's pass@t), NULL when unknown. A task with several chains
-- takes the mean over its chains known at t (the width-1 value of the frontier).
CREATE OR REPLACE MACRO task_curve_of(errors_as_failures, run_ids := NULL) AS TABLE
SELECT o.run_id, o.task_index, g.t::INTEGER AS t, any_value(o.metric) AS metric,
       any_value(o.k) AS k,
       avg(metric_outcome(o.metric, o.n_samples, o.n_success, o.first_success, o.known_to, g.t))
           AS value,
       avg(first_t_outcome(o.first_success, o.known_to, g.t)) AS first_t_value
FROM task_outcomes_of(errors_as_failures, run_ids := run_ids) o, range(1, o.k + 1) AS g(t)
GROUP BY o.run_id, o.task_index, g.t;

-- task_curve_of with errors excluded, every run.
CREATE OR REPLACE VIEW task_curve AS SELECT * FROM task_curve_of(false);

-- One row per (run, task): the task's value at t = 1, 2, K-1 and K (as in task_curve),
-- what ΔSeq@K, EGS, LGS, the lift and the framing effect are computed from; first_at_1:
-- attempt or sample 1 alone, 1/0 (NULL when unknown), seq@1 for seq@k and a pass@k run's
-- sample 1, which the framing effect compares when seeds match. A task with several chains
-- takes the mean of each figure over its chains known there.
CREATE OR REPLACE MACRO task_points_of(errors_as_failures, run_ids := NULL) AS TABLE
SELECT any_value(run_id) AS run_id, task_index, any_value(metric) AS metric, any_value(k) AS k,
       avg(first_t_outcome(first_success, known_to, 1)) AS first_at_1,
       avg(metric_outcome(metric, n_samples, n_success, first_success, known_to, 1)) AS at_1,
       avg(metric_outcome(metric, n_samples, n_success, first_success, known_to, least(2, k)))
           AS at_2,
       avg(metric_outcome(metric, n_samples, n_success, first_success, known_to,
                          greatest(k - 1, 1)))                                AS at_k_minus_1,
       avg(metric_outcome(metric, n_samples, n_success, first_success, known_to, k)) AS at_k
FROM task_outcomes_of(errors_as_failures, run_ids := run_ids)
GROUP BY run_no, task_index;

-- One row per (run, t): metric@t over the n_tasks counted at t (n_left_out: tasks whose
-- outcome at t is unknown), its 95% Wilson interval (low, high), seq_k's first-t figure with
-- its own n, pass_all_t (pass@k runs: pass^t, the unbiased probability that all of t samples
-- succeed, C(c, t) / C(n, t), over the same n_tasks; NULL for seq@k), the soft score (mean best
-- score within the first t, over those n_first_t tasks; clipped to [0, 1] after averaging for
-- a run whose soft_score_clipped), and the mean spend per task up to t over all n_started tasks of the run (seq@k:
-- calls of attempts 1..t; pass@k: t samples at the run's mean cost per sample);
-- cost_usd_per_task is NULL when no call of the run was priced. n_started and
-- n_error_attempts are the run's, repeated on each row. For a seq@k run with several chains
-- (`chains:`) every figure is the width-1 one: a task's value is the mean over its chains known
-- at t, the soft score a mean over chains, the spend per chain.
CREATE OR REPLACE MACRO run_curve_of(errors_as_failures, run_ids := NULL) AS TABLE
WITH outcomes AS (
    SELECT * FROM task_outcomes_of(errors_as_failures, run_ids := run_ids)
),
-- Tasks with the same counts have the same figures: compute each once, weighted by n.
-- n_chains_first_t: the chains whose first-t outcome is known (the soft score's denominator).
points AS (
    SELECT y.run_id, g.t::INTEGER AS t, y.metric, y.k, y.n,
           metric_outcome(y.metric, y.n_samples, y.n_success, y.first_success, y.known_to, g.t)
               AS value,
           first_t_outcome(y.first_success, y.known_to, g.t) AS first_t_value,
           CASE WHEN first_t_value IS NOT NULL THEN y.n ELSE 0 END AS n_chains_first_t,
           CASE WHEN y.metric = 'pass@k' THEN pass_all_t_unbiased(y.n_samples, y.n_success, g.t)
                END AS pass_all_t
    FROM (SELECT run_id, metric, k, n_samples, n_success, first_success, known_to,
                 count(*) AS n
          FROM outcomes WHERE chains = 1 GROUP BY ALL) y,
         range(1, y.k + 1) AS g(t)
    UNION ALL
    -- several chains: a task's figures are means over its chains known at t
    SELECT any_value(o.run_id), g.t::INTEGER, any_value(o.metric), any_value(o.k), 1,
           avg(metric_outcome(o.metric, o.n_samples, o.n_success, o.first_success, o.known_to,
                              g.t)),
           avg(first_t_outcome(o.first_success, o.known_to, g.t)),
           count(first_t_outcome(o.first_success, o.known_to, g.t)), NULL
    FROM outcomes o, range(1, o.k + 1) AS g(t)
    WHERE o.chains > 1
    GROUP BY o.run_no, o.task_index, g.t
),
success AS (
    SELECT run_id, t, any_value(metric) AS metric, any_value(k) AS k,
           -- sums of BIGINT are HUGEINT, which polars and pandas cannot hold
           coalesce(sum(n) FILTER (WHERE value IS NOT NULL), 0)::BIGINT          AS n_tasks,
           coalesce(sum(n) FILTER (WHERE value IS NULL), 0)::BIGINT              AS n_left_out,
           sum(n * value)                                                        AS x,
           sum(n * value * value)                                                AS x2,
           coalesce(sum(n) FILTER (WHERE first_t_value IS NOT NULL), 0)::BIGINT  AS n_first_t,
           sum(n * first_t_value)                                        AS x_first_t,
           sum(n_chains_first_t)                                         AS n_chains_first_t,
           sum(n * pass_all_t)                                           AS x_all
    FROM points
    GROUP BY run_id, t
),
-- Soft score: a slot's best-so-far score holds from its index to the slot before the next
-- one, and counts at the t where its task is counted: [1, known_to] and [first_success, K].
-- Each such span becomes a +best / -best pair of events, summed up over t below; this
-- avoids expanding every task to K rows. A task whose slots are 1..n_attempts (no holes,
-- the usual case) needs no window to find the next slot; only the running best does.
slots AS (
    SELECT run_no, task_index, chain_index, attempt_index,
           coalesce(max(CASE WHEN status = 'ok' THEN coalesce(score, success::DOUBLE) END)
                    OVER (PARTITION BY run_no, task_index, chain_index ORDER BY attempt_index
                          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW), 0.0) AS best
    FROM current_attempts_of(run_ids := run_ids)
),
spans AS (
    SELECT o.run_id, s.task_index, s.chain_index, s.attempt_index AS lo, s.best, o.k, o.known_to,
           coalesce(o.first_success, o.k + 1) AS first_success,
           -- no holes: the next slot is the next index, and the last one holds through K
           CASE WHEN o.settled_prefix <> o.n_attempts THEN NULL
                WHEN s.attempt_index < o.n_attempts THEN s.attempt_index
                ELSE o.k END AS hi
    FROM slots s
    JOIN outcomes o USING (run_no, task_index, chain_index)
),
spans_all AS (
    SELECT run_id, lo, best, known_to, first_success, hi FROM spans WHERE hi IS NOT NULL
    UNION ALL
    SELECT run_id, lo, best, known_to, first_success,
           coalesce(lead(lo) OVER (PARTITION BY run_id, task_index, chain_index ORDER BY lo) - 1,
                    k)
    FROM spans WHERE hi IS NULL
),
events AS (
    SELECT run_id, t, sum(d) AS d FROM (
        SELECT run_id, lo AS t, best AS d FROM spans_all WHERE lo <= least(hi, known_to)
        UNION ALL
        SELECT run_id, least(hi, known_to) + 1, -best FROM spans_all WHERE lo <= least(hi, known_to)
        UNION ALL
        SELECT run_id, greatest(lo, first_success, known_to + 1), best FROM spans_all
        WHERE greatest(lo, first_success, known_to + 1) <= hi
        UNION ALL
        SELECT run_id, hi + 1, -best FROM spans_all
        WHERE greatest(lo, first_success, known_to + 1) <= hi
    )
    GROUP BY run_id, t
),
spend AS (
    SELECT run_id, attempt_index,
           sum(coalesce(input_tokens, 0) + coalesce(output_tokens, 0)) AS tokens,
           sum(cost_usd) AS cost_usd, count(cost_usd) AS n_priced
    FROM current_calls
    WHERE run_ids IS NULL OR list_contains(run_ids, run_id)
    GROUP BY run_id, attempt_index
),
per_run AS (
    SELECT o.run_id, o.n_started, o.n_started_chains, o.n_attempts, o.n_error_attempts,
           p.tokens, p.cost_usd, coalesce(p.n_priced, 0) AS n_priced,
           coalesce(ru.soft_score_clipped, false) AS soft_score_clipped
    FROM (SELECT run_id,
                 CASE WHEN max(chains) = 1 THEN count(*)
                      ELSE count(DISTINCT task_index) END AS n_started,
                 count(*) AS n_started_chains, sum(n_attempts) AS n_attempts,
                 sum(n_error)::BIGINT AS n_error_attempts
          FROM outcomes GROUP BY run_id) o
    LEFT JOIN (SELECT run_id, sum(tokens) AS tokens, sum(cost_usd) AS cost_usd,
                      sum(n_priced) AS n_priced
               FROM spend GROUP BY run_id) p USING (run_id)
    LEFT JOIN runs ru USING (run_id)
)
SELECT s.run_id, s.t, s.metric, s.k, s.n_tasks, s.n_left_out,
       s.x / nullif(s.n_tasks, 0)                     AS value,
       wilson_low(s.x, s.n_tasks)                     AS low,
       wilson_high(s.x, s.n_tasks)                    AS high,
       -- seq_k's standard error: sample sd of the per-task values / sqrt(n tasks)
       CASE WHEN s.n_tasks > 1
            THEN sqrt(greatest(s.x2 - s.x * s.x / s.n_tasks, 0.0) / (s.n_tasks - 1))
                 / sqrt(s.n_tasks)
            WHEN s.n_tasks = 1 THEN 0.0 END          AS se,
       s.n_first_t,
       s.x_first_t / nullif(s.n_first_t, 0)           AS first_t_value,
       clipped_if(r.soft_score_clipped,
                  sum(coalesce(e.d, 0.0)) OVER (PARTITION BY s.run_id ORDER BY s.t)
                      / nullif(s.n_chains_first_t, 0)) AS soft_score,
       CASE WHEN r.n_priced = 0 THEN NULL
            WHEN s.metric = 'seq@k'
            THEN sum(coalesce(c.cost_usd, 0.0)) OVER (PARTITION BY s.run_id ORDER BY s.t)
                 / r.n_started_chains
            ELSE s.t * r.cost_usd / r.n_attempts END  AS cost_usd_per_task,
       CASE WHEN s.metric = 'seq@k'
            THEN sum(coalesce(c.tokens, 0)) OVER (PARTITION BY s.run_id ORDER BY s.t)
                 / r.n_started_chains
            ELSE s.t * coalesce(r.tokens, 0) / r.n_attempts END AS tokens_per_task,
       r.n_started, r.n_error_attempts,
       s.x_all / nullif(s.n_tasks, 0)                 AS pass_all_t
FROM success s
JOIN per_run r USING (run_id)
LEFT JOIN events e USING (run_id, t)
LEFT JOIN spend c ON c.run_id = s.run_id AND c.attempt_index = s.t;

-- run_curve_of with errors excluded, every run.
CREATE OR REPLACE VIEW run_curve AS SELECT * FROM run_curve_of(false);

-- The width x depth frontier per task: one row per (run, task, width, depth). For a task with
-- n_d chains known at depth d (solved by d, or attempts 1..d all valid; as in run_curve) of
-- which c_d solved within d, value = 1 - C(n_d - c_d, w) / C(n_d, w), the probability that w
-- independent chains of depth d solve it (Chen et al.'s estimator applied to chains), NULL when
-- n_d < w. seq@k: widths 1..runs.chains, depths 1..K. pass@k: depth 1 only, its samples as
-- width (1..k), value = Chen's pass@w. cost_usd, tokens: the expected spend of (w, d) on the
-- task, w x the mean, over its chains counted at d, of what attempts 1..min(d, first success)
-- cost (every call, failed ones included); pass@k: w x the run's mean spend per sample.
-- priced: whether any call of the run was priced (cost_usd means nothing otherwise).
CREATE OR REPLACE MACRO frontier_tasks_of(errors_as_failures, run_ids := NULL) AS TABLE
WITH chosen AS (
    SELECT run_id, generation FROM runs
    WHERE run_ids IS NULL OR list_contains(run_ids, run_id)
),
outcomes AS MATERIALIZED (
    SELECT * FROM task_outcomes_of(errors_as_failures, run_ids := run_ids)
),
-- Every call of the current generation, summed per slot that has an attempt that counts
-- (run_no set) and per run for the rest: one pass over calls.
spend AS MATERIALIZED (
    SELECT c.run_id, o.run_no, c.task_index, c.chain_index, c.attempt_index,
           sum(coalesce(c.input_tokens, 0) + coalesce(c.output_tokens, 0)) AS tokens,
           sum(c.cost_usd) AS cost_usd, count(c.cost_usd) AS n_priced
    FROM calls c
    JOIN chosen r ON c.run_id = r.run_id AND c.generation = r.generation
    LEFT JOIN outcomes o
           ON o.run_id = c.run_id AND o.task_index = c.task_index
          AND o.chain_index = c.chain_index AND o.metric = 'seq@k'
    GROUP BY ALL
),
per_run AS (
    SELECT o.run_id, o.n_attempts, p.tokens, p.cost_usd, coalesce(p.n_priced, 0) > 0 AS priced
    FROM (SELECT run_id, sum(n_attempts) AS n_attempts FROM outcomes GROUP BY run_id) o
    LEFT JOIN (SELECT run_id, sum(tokens) AS tokens, sum(cost_usd) AS cost_usd,
                      sum(n_priced) AS n_priced
               FROM spend GROUP BY run_id) p USING (run_id)
),
-- Each seq@k chain at each depth d: its spend through d is the running sum of its slots'
-- spend up to d (a chain that stopped at its first success has no later calls, so costs no
-- more); an equality join and a window, where a range join or an ASOF join is slower.
chain_depth AS (
    SELECT o.run_id, o.run_no, o.task_index, o.chain_index, o.chains, g.d::INTEGER AS d,
           coalesce(o.first_success <= g.d, false) AS solved,
           coalesce(o.first_success <= g.d OR o.known_to >= g.d, false) AS known
    FROM outcomes o, range(1, o.k + 1) AS g(d)
    WHERE o.metric = 'seq@k'
),
chain_spend AS (
    SELECT c.*,
           sum(coalesce(s.cost_usd, 0.0)) OVER w AS cost_usd,
           sum(coalesce(s.tokens, 0)) OVER w AS tokens
    FROM chain_depth c
    LEFT JOIN spend s
      ON s.run_no = c.run_no AND s.task_index = c.task_index AND s.chain_index = c.chain_index
     AND s.attempt_index = c.d
    WINDOW w AS (PARTITION BY c.run_no, c.task_index, c.chain_index ORDER BY c.d
                 ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
),
task_depth AS (
    SELECT any_value(run_id) AS run_id, task_index, d, any_value(chains) AS chains,
           count(*) FILTER (WHERE known) AS n_d,
           count(*) FILTER (WHERE solved) AS c_d,
           sum(cost_usd) FILTER (WHERE known) AS cost_usd,
           sum(tokens) FILTER (WHERE known) AS tokens
    FROM chain_spend
    GROUP BY run_no, task_index, d
)
SELECT t.run_id, t.task_index, g.w::INTEGER AS width, t.d AS depth,
       pass_at_t_unbiased(t.n_d, t.c_d, g.w) AS value,
       g.w * t.cost_usd / nullif(t.n_d, 0) AS cost_usd,
       g.w * t.tokens / nullif(t.n_d, 0) AS tokens, r.priced
FROM task_depth t JOIN per_run r USING (run_id), range(1, t.chains + 1) AS g(w)
UNION ALL
SELECT o.run_id, o.task_index, g.w::INTEGER, 1, pass_at_t_unbiased(o.n_samples, o.n_success, g.w),
       g.w * r.cost_usd / r.n_attempts, g.w * coalesce(r.tokens, 0) / r.n_attempts, r.priced
FROM outcomes o JOIN per_run r USING (run_id), range(1, o.k + 1) AS g(w)
WHERE o.metric = 'pass@k';

-- frontier_tasks_of's value column alone (run_id, task_index, width, depth, value), without the
-- spend, which costs most of it: what the equal-budget bootstrap resamples
-- (tests/store/test_frontier_paths.py holds the two equal).
CREATE OR REPLACE MACRO frontier_task_values_of(errors_as_failures, run_ids := NULL) AS TABLE
WITH outcomes AS MATERIALIZED (
    SELECT * FROM task_outcomes_of(errors_as_failures, run_ids := run_ids)
),
task_depth AS (
    SELECT any_value(o.run_id) AS run_id, o.task_index, g.d::INTEGER AS d,
           any_value(o.chains) AS chains,
           count(*) FILTER (WHERE o.first_success <= g.d OR o.known_to >= g.d) AS n_d,
           count(*) FILTER (WHERE o.first_success <= g.d) AS c_d
    FROM outcomes o, range(1, o.k + 1) AS g(d)
    WHERE o.metric = 'seq@k' AND o.chains > 1
    GROUP BY o.run_no, o.task_index, g.d
)
SELECT t.run_id, t.task_index, g.w::INTEGER AS width, t.d AS depth,
       pass_at_t_unbiased(t.n_d, t.c_d, g.w) AS value
FROM task_depth t, range(1, t.chains + 1) AS g(w)
UNION ALL
-- one chain: width 1, and the chain's own outcome (pass_at_t_unbiased of 0 or 1 chains)
SELECT o.run_id, o.task_index, 1, g.d::INTEGER, first_t_outcome(o.first_success, o.known_to, g.d)
FROM outcomes o, range(1, o.k + 1) AS g(d)
WHERE o.metric = 'seq@k' AND o.chains = 1
UNION ALL
SELECT o.run_id, o.task_index, g.w::INTEGER, 1, pass_at_t_unbiased(o.n_samples, o.n_success, g.w)
FROM outcomes o, range(1, o.k + 1) AS g(w)
WHERE o.metric = 'pass@k';

-- One row per (run, width, depth): the frontier_tasks_of values averaged over the n_tasks with
-- a value there (n_left_out: the other started tasks), and the mean expected spend per task
-- over the same tasks: cost_usd_per_task (NULL when no call of the run was priced) and
-- tokens_per_task (input + output). Right for every run, but it expands every task to its
-- widths and depths: frontier_of takes it only for runs with several chains.
CREATE OR REPLACE MACRO frontier_by_task_of(errors_as_failures, run_ids := NULL) AS TABLE
SELECT run_id, width, depth, avg(value) AS value,
       count(value) AS n_tasks, (count(*) - count(value))::BIGINT AS n_left_out,
       CASE WHEN bool_or(priced) THEN avg(cost_usd) FILTER (WHERE value IS NOT NULL) END
           AS cost_usd_per_task,
       coalesce(avg(tokens) FILTER (WHERE value IS NOT NULL), 0.0) AS tokens_per_task
FROM frontier_tasks_of(errors_as_failures, run_ids := run_ids)
GROUP BY run_id, width, depth;

-- frontier_by_task_of's rows for runs with one chain per task (pass@k runs, seq@k runs with
-- `chains: 1`), without expanding tasks to depths (tests/store/test_frontier_paths.py holds
-- the two equal). Width is 1 for such a seq@k run and a task counts at depth d where it is known
-- there, d in [1, known_to] or [first_success, K]; each task and each call becomes +/- events
-- at the depths where that starts and stops holding, summed up over d per run (as run_curve's
-- soft score). A call of attempt a adds to the spend of every depth d >= a where its task is
-- counted. pass@k: tasks with the same counts have the same pass@w, computed once per group.
CREATE OR REPLACE MACRO frontier_one_chain_of(errors_as_failures, run_ids := NULL) AS TABLE
WITH chosen AS (
    SELECT run_id, generation FROM runs
    WHERE run_ids IS NULL OR list_contains(run_ids, run_id)
),
outcomes AS MATERIALIZED (
    SELECT run_id, task_index, chain_index, metric, k, n_samples, n_success, first_success,
           known_to, n_attempts
    FROM task_outcomes_of(errors_as_failures, run_ids := run_ids)
),
-- Every call of the current generation in one pass, summed over the calls of a run's attempt
-- index whose tasks have the same known_to and first_success: a few rows per run and depth.
-- matched: the call's chain has an attempt that counts (a seq@k chain's spend is counted only
-- then; a run's totals count every call).
spend AS (
    SELECT c.run_id, c.attempt_index, o.known_to, o.first_success,
           o.metric = 'seq@k' AS seq, o.run_id IS NOT NULL AS matched,
           sum(coalesce(c.input_tokens, 0) + coalesce(c.output_tokens, 0)) AS tokens,
           sum(c.cost_usd) AS cost_usd, count(c.cost_usd) AS n_priced
    FROM calls c
    JOIN chosen r ON c.run_id = r.run_id AND c.generation = r.generation
    LEFT JOIN outcomes o
           ON o.run_id = c.run_id AND o.task_index = c.task_index
          AND o.chain_index = c.chain_index
    GROUP BY ALL
),
per_run AS (
    SELECT o.run_id, o.metric, o.k, o.n_started, o.n_attempts, p.tokens, p.cost_usd,
           coalesce(p.n_priced, 0) > 0 AS priced
    FROM (SELECT run_id, any_value(metric) AS metric, any_value(k) AS k, count(*) AS n_started,
                 sum(n_attempts) AS n_attempts
          FROM outcomes GROUP BY run_id) o
    LEFT JOIN (SELECT run_id, sum(tokens) AS tokens, sum(cost_usd) AS cost_usd,
                      sum(n_priced) AS n_priced
               FROM spend GROUP BY run_id) p USING (run_id)
),
seq_groups AS (
    SELECT run_id, known_to, first_success, count(*) AS n
    FROM outcomes WHERE metric = 'seq@k' GROUP BY ALL
),
seq_spend AS (
    SELECT run_id, attempt_index, known_to, first_success, coalesce(cost_usd, 0.0) AS cost,
           tokens
    FROM spend WHERE matched AND seq
),
-- dn: tasks counted, dc: tasks solved, dcost / dtokens: their spend through d
events AS (
    SELECT run_id, d, sum(dn) AS dn, sum(dc) AS dc, sum(dcost) AS dcost, sum(dtokens) AS dtokens
    FROM (
        SELECT run_id, 1 AS d, n AS dn, 0 AS dc, 0.0 AS dcost, 0 AS dtokens
        FROM seq_groups WHERE known_to >= 1
        UNION ALL
        SELECT run_id, known_to + 1, -n, 0, 0.0, 0 FROM seq_groups WHERE known_to >= 1
        UNION ALL
        SELECT run_id, greatest(first_success, known_to + 1), n, 0, 0.0, 0
        FROM seq_groups WHERE first_success IS NOT NULL
        UNION ALL
        SELECT run_id, first_success, 0, n, 0.0, 0 FROM seq_groups WHERE first_success IS NOT NULL
        UNION ALL
        SELECT run_id, attempt_index, 0, 0, cost, tokens FROM seq_spend
        WHERE attempt_index <= known_to
        UNION ALL
        SELECT run_id, known_to + 1, 0, 0, -cost, -tokens FROM seq_spend
        WHERE attempt_index <= known_to
        UNION ALL
        SELECT run_id, greatest(attempt_index, first_success, known_to + 1), 0, 0, cost, tokens
        FROM seq_spend WHERE first_success IS NOT NULL
    )
    GROUP BY run_id, d
),
seq_grid AS (
    SELECT r.run_id, g.d::INTEGER AS d, r.n_started, r.priced
    FROM per_run r, range(1, r.k + 1) AS g(d)
    WHERE r.metric = 'seq@k'
),
seq_depths AS (
    SELECT r.run_id, r.d, r.n_started, r.priced,
           sum(coalesce(e.dn, 0)) OVER w AS n_d, sum(coalesce(e.dc, 0)) OVER w AS c_d,
           sum(coalesce(e.dcost, 0.0)) OVER w AS cost_usd,
           sum(coalesce(e.dtokens, 0)) OVER w AS tokens
    FROM seq_grid r LEFT JOIN events e ON e.run_id = r.run_id AND e.d = r.d
    WINDOW w AS (PARTITION BY r.run_id ORDER BY r.d)
),
pass_groups AS (
    SELECT o.run_id, g.w::INTEGER AS width, o.n,
           pass_at_t_unbiased(o.n_samples, o.n_success, g.w) AS value
    FROM (SELECT run_id, k, n_samples, n_success, count(*) AS n
          FROM outcomes WHERE metric = 'pass@k' GROUP BY ALL) o,
         range(1, o.k + 1) AS g(w)
),
pass_widths AS (
    SELECT run_id, width, coalesce(sum(n) FILTER (WHERE value IS NOT NULL), 0)::BIGINT AS n_d,
           sum(n * value) AS x
    FROM pass_groups GROUP BY run_id, width
)
SELECT run_id, 1 AS width, d AS depth, c_d / nullif(n_d, 0) AS value, n_d::BIGINT AS n_tasks,
       (n_started - n_d)::BIGINT AS n_left_out,
       CASE WHEN priced THEN cost_usd / nullif(n_d, 0) END AS cost_usd_per_task,
       coalesce(tokens / nullif(n_d, 0), 0.0) AS tokens_per_task
FROM seq_depths
UNION ALL
SELECT p.run_id, p.width, 1, p.x / nullif(p.n_d, 0), p.n_d, (r.n_started - p.n_d)::BIGINT,
       CASE WHEN r.priced AND p.n_d > 0 THEN p.width * r.cost_usd / r.n_attempts END,
       CASE WHEN p.n_d > 0 THEN p.width * coalesce(r.tokens, 0) / r.n_attempts ELSE 0.0 END
FROM pass_widths p JOIN per_run r USING (run_id);

-- One row per (run, width, depth): frontier_by_task_of's figures, taken from
-- frontier_one_chain_of for runs with one chain per task, which needs no per-task expansion
-- (ten times faster over a million attempts). Width 1 of a seq@k run is run_curve's seq@t.
CREATE OR REPLACE MACRO frontier_of(errors_as_failures, run_ids := NULL) AS TABLE
SELECT * FROM (
    SELECT * FROM frontier_one_chain_of(errors_as_failures, run_ids := (
        SELECT coalesce(list(run_id), []::VARCHAR[]) FROM runs
        WHERE chains = 1 AND (run_ids IS NULL OR list_contains(run_ids, run_id))))
    UNION ALL
    SELECT * FROM frontier_by_task_of(errors_as_failures, run_ids := (
        SELECT coalesce(list(run_id), []::VARCHAR[]) FROM runs
        WHERE chains > 1 AND (run_ids IS NULL OR list_contains(run_ids, run_id))))
)
ORDER BY run_id, width, depth;

-- frontier_of with errors excluded, every run.
CREATE OR REPLACE VIEW frontier AS SELECT * FROM frontier_of(false);

-- Which pass@k run each seq@k run is compared with: same benchmark, slice, actor model, k,
-- verifier and judge (pass@k never shows feedback, so its feedback mode does not matter).
-- A re-judging run (config.rejudge_of) is never a partner: re-judging would otherwise
-- silently change every comparison; `seqk report <seq run> <re-judging run>` asks for it.
-- choice = 1 is the one used: same feedback mode first, then same temperature, then the
-- smallest run_id; n_candidates says how many there were. same_seed: both actors sample
-- with the same seed by the same rule (runs.config: actor.seed, seed_scheme), so attempt 1
-- and sample 1 of a task share their seed.
CREATE OR REPLACE VIEW run_pairs AS
SELECT s.run_id AS seq_run_id, p.run_id AS pass_run_id,
       row_number() OVER (PARTITION BY s.run_id ORDER BY
           (p.feedback_mode = s.feedback_mode) DESC,
           (p.temperature IS NOT DISTINCT FROM s.temperature) DESC, p.run_id) AS choice,
       count(*) OVER (PARTITION BY s.run_id) AS n_candidates,
       coalesce(json_extract_string(s.config, '$.actor.seed')
                = json_extract_string(p.config, '$.actor.seed'), false)
       AND json_extract_string(s.config, '$.seed_scheme')
           IS NOT DISTINCT FROM json_extract_string(p.config, '$.seed_scheme') AS same_seed
FROM runs s
JOIN runs p
  ON s.metric = 'seq@k' AND p.metric = 'pass@k' AND p.benchmark = s.benchmark
 AND p.slice = s.slice AND p.actor_model = s.actor_model AND p.k = s.k
 AND p.verifier = s.verifier AND p.judge_model IS NOT DISTINCT FROM s.judge_model
 AND json_extract_string(p.config, '$.rejudge_of') IS NULL;

-- One row per task a seq@k run shares with its chosen pass@k run (same task_index, same
-- content): each run's value at t = 1 and t = K (NULL where the task is left out), the
-- pass@k run's sample 1 alone (pass_sample_1) and the pairs' same_seed.
-- run_ids, when given, selects seq@k runs.
CREATE OR REPLACE MACRO paired_tasks_of(errors_as_failures, run_ids := NULL) AS TABLE
WITH pairs AS (
    SELECT seq_run_id, pass_run_id, same_seed FROM run_pairs
    WHERE choice = 1 AND (run_ids IS NULL OR list_contains(run_ids, seq_run_id))
),
points AS (
    SELECT p.run_id, p.task_index, t.content_hash, p.at_1, p.at_k, p.first_at_1
    FROM task_points_of(errors_as_failures, run_ids := (
             SELECT list(seq_run_id) || list(pass_run_id) FROM pairs)) p
    JOIN tasks t USING (run_id, task_index)
)
SELECT x.seq_run_id, x.pass_run_id, s.task_index,
       s.at_1 AS seq_at_1, p.at_1 AS pass_at_1, s.at_k AS seq_at_k, p.at_k AS pass_at_k,
       p.first_at_1 AS pass_sample_1, x.same_seed
FROM pairs x
JOIN points s ON s.run_id = x.seq_run_id
JOIN points p ON p.run_id = x.pass_run_id AND p.task_index = s.task_index
             AND p.content_hash = s.content_hash;

-- paired_tasks_of with errors excluded, every seq@k run.
CREATE OR REPLACE VIEW paired_tasks AS SELECT * FROM paired_tasks_of(false);

-- One row per seq@k run with a pass@k partner: feedback lift = seq@K - pass@K on the n_shared
-- tasks both count at K; flips (n_seq_only: pass@K failed and seq@K solved; n_pass_only:
-- the reverse); framing effect = seq@1 - pass@1 on the n_shared_at_1 tasks both count at 1,
-- where pass@1 is the pass@k run's sample 1 when the seeds match (framing_vs says which):
-- same seed, same task, only the prompt's framing differs.
CREATE OR REPLACE MACRO feedback_lift_of(errors_as_failures, run_ids := NULL) AS TABLE
SELECT r.benchmark, r.slice, r.actor_model, r.feedback_mode, r.k,
       x.seq_run_id, x.pass_run_id, x.n_shared, x.seq_at_k, x.pass_at_k,
       x.seq_at_k - x.pass_at_k AS lift, x.n_seq_only, x.n_pass_only, x.n_shared_at_1,
       x.seq_at_1, x.pass_at_1, x.seq_at_1 - x.pass_at_1 AS framing_effect,
       CASE WHEN x.same_seed THEN 'pass@k sample 1 (same seed)' ELSE 'pass@1 (Chen mean)' END
           AS framing_vs
FROM (
    SELECT seq_run_id, any_value(pass_run_id) AS pass_run_id, any_value(same_seed) AS same_seed,
           count(*) FILTER (WHERE seq_at_k IS NOT NULL AND pass_at_k IS NOT NULL) AS n_shared,
           avg(seq_at_k) FILTER (WHERE pass_at_k IS NOT NULL)      AS seq_at_k,
           avg(pass_at_k) FILTER (WHERE seq_at_k IS NOT NULL)      AS pass_at_k,
           count(*) FILTER (WHERE seq_at_k = 1 AND pass_at_k = 0)  AS n_seq_only,
           count(*) FILTER (WHERE seq_at_k = 0 AND pass_at_k = 1)  AS n_pass_only,
           count(*) FILTER (WHERE seq_at_1 IS NOT NULL AND pass_at_1 IS NOT NULL)
                                                                   AS n_shared_at_1,
           avg(seq_at_1) FILTER (WHERE pass_at_1 IS NOT NULL)      AS seq_at_1,
           avg(pass_at_1) FILTER (WHERE seq_at_1 IS NOT NULL)      AS pass_at_1
    FROM (SELECT * REPLACE (CASE WHEN same_seed THEN pass_sample_1 ELSE pass_at_1 END
                            AS pass_at_1)
          FROM paired_tasks_of(errors_as_failures, run_ids := run_ids))
    GROUP BY seq_run_id
) x
JOIN runs r ON r.run_id = x.seq_run_id;

-- feedback_lift_of with errors excluded, every seq@k run.
CREATE OR REPLACE VIEW feedback_lift AS SELECT * FROM feedback_lift_of(false);

-- One row per (run, task, role, model): calls (failed ones included), the four token
-- fields, cost_usd (NULL when no call was priced) and the calls whose price is unknown.
CREATE OR REPLACE VIEW task_spend AS
SELECT run_id, task_index, role, model,
       count(*)                                                   AS n_calls,
       count(*) FILTER (WHERE error IS NOT NULL)                  AS n_failed_calls,
       coalesce(sum(input_tokens), 0)::BIGINT                     AS input_tokens,
       coalesce(sum(cached_tokens), 0)::BIGINT                    AS cached_tokens,
       coalesce(sum(thinking_tokens), 0)::BIGINT                  AS thinking_tokens,
       coalesce(sum(output_tokens), 0)::BIGINT                    AS output_tokens,
       sum(cost_usd)                                              AS cost_usd,
       n_unpriced_calls(cost_usd, error)                          AS n_unpriced_calls
FROM current_calls
GROUP BY run_id, task_index, role, model;
