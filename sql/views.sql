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

-- A sum of doubles that is the same bits however DuckDB splits the rows between its threads: each
-- term rounded to 1e-20 (DECIMAL(38, 20)) and added exactly (HUGEINT), the total made a double
-- once. DuckDB's own sum of doubles adds in whatever order its threads finish, so the last bits of
-- a mean moved between two runs of the same query on the same file (a pass^t printed as 0.107 or
-- 0.108 from one run to the next); this sum is also the more exact one (its error is the terms'
-- rounding, at most 5e-21 each, not a double sum's). A term must lie within +/-1e18 and the total
-- within +/-1.7e18 (probabilities, dollars, tokens), else the query fails saying so; NULL terms are
-- skipped as by sum(). A macro, not an aggregate: FILTER (WHERE c) is written
-- exact_sum(CASE WHEN c THEN x END).
CREATE OR REPLACE MACRO exact_partial(x) AS sum(x::DECIMAL(38, 20));
CREATE OR REPLACE MACRO exact_sum(x) AS exact_partial(x)::DOUBLE;

-- exact_sum in two steps, for sums taken over groups first (chain_tally_of's states): exact_partial
-- (above) is the exact DECIMAL sum of a group's terms, exact_total the double of the exact sum of
-- such partial sums, the same bits as exact_sum over every term.
CREATE OR REPLACE MACRO exact_total(partial) AS sum(partial)::DOUBLE;

-- avg() with exact_sum's order-free sum: the mean of the non-NULL terms, NULL when there are none.
CREATE OR REPLACE MACRO exact_avg(x) AS exact_sum(x) / nullif(count(x), 0);

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

-- What the table chain_kept keeps of each chain (the chains named by `keys`, a list of
-- {run_id, generation, task_index, chain_index}; NULL: every chain of every generation), computed
-- from attempts and calls: written by seqk.store.writes.append_attempts for the chains a write
-- touched, in the same transaction, and by a migration for a whole database. A slot (an attempt
-- index) counts its valid row if it has one, else its errors (current_attempts_of's rule); the
-- counts, the first success and the first error, how far its slots are all valid (valid_prefix)
-- or all valid-or-error (settled_prefix), whether its last slot is an error, and its spend: what
-- each valid slot cost (every call of the slot, a superseded error's included; an errored slot's
-- calls, and calls of no slot, are the errors' price and no policy's): cost_usd and tokens (input
-- + output), lists over attempts 1..valid_prefix (an element of cost_usd is NULL when no call of
-- that slot was priced); valid_cost_usd and valid_tokens, summed over every valid slot (a pass@k
-- task's samples); priced: whether any call of the chain was priced; and over every call of the
-- chain (what `seqk status` says was paid): input_tokens, output_tokens, spent_usd (NULL when none
-- was priced), n_unpriced_calls, n_failed_calls (error IS NOT NULL) and spend_by_slot, each
-- attempt index with a call, in order, whatever its slot's fate: its calls' cost (NULL when none
-- was priced) and tokens, for the spend through an attempt index; slot_best, each slot's
-- best-so-far score (a valid row's score, or its success as 1.0; 0.0 before any), for the soft
-- score.
CREATE OR REPLACE MACRO chain_kept_rows(keys := NULL) AS TABLE
WITH chosen AS MATERIALIZED (
    -- (DISTINCT over the UNNEST itself would keep one row of the list)
    SELECT DISTINCT * FROM (
        SELECT UNNEST(coalesce(keys, []::STRUCT(run_id VARCHAR, generation INTEGER, task_index INTEGER,
                                                chain_index INTEGER)[]), recursive := true))
),
rows AS (
    SELECT run_id, generation, task_index, chain_index, attempt_index, status, success, score,
           finished_at
    FROM attempts WHERE keys IS NULL
    UNION ALL
    SELECT a.run_id, a.generation, a.task_index, a.chain_index, a.attempt_index, a.status, a.success,
           a.score, a.finished_at
    FROM attempts a SEMI JOIN chosen c USING (run_id, generation, task_index, chain_index)
    WHERE keys IS NOT NULL
),
slots AS (
    SELECT *, coalesce(max(score) OVER (PARTITION BY run_id, generation, task_index, chain_index
                                        ORDER BY attempt_index
                                        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW), 0.0) AS best
    FROM (
        SELECT run_id, generation, task_index, chain_index, attempt_index,
               bool_or(status = 'ok')                                          AS valid,
               coalesce(bool_or(status = 'ok' AND success), false)              AS solved,
               max(coalesce(score, success::DOUBLE)) FILTER (WHERE status = 'ok') AS score,
               max(finished_at)                                                 AS finished_at
        FROM rows GROUP BY run_id, generation, task_index, chain_index, attempt_index
    )
),
facts AS (
    SELECT run_id, generation, task_index, chain_index,
           count(*)                                                         AS n_attempts,
           count(*) FILTER (WHERE valid)                                    AS n_valid,
           count(*) FILTER (WHERE NOT valid)                                AS n_error,
           count(*) FILTER (WHERE solved)                                   AS n_success,
           min(attempt_index) FILTER (WHERE solved)                         AS first_success,
           min(attempt_index) FILTER (WHERE NOT valid)                      AS first_error,
           -- Without holes (the usual case) the prefix is the count; pass@k samples finish
           -- out of order, so a run in progress can have holes.
           CASE WHEN count(*) FILTER (WHERE valid)
                     = coalesce(max(attempt_index) FILTER (WHERE valid), 0)
                THEN count(*) FILTER (WHERE valid)
                ELSE len([x FOR x, i IN list_sort(list(attempt_index) FILTER (WHERE valid)) IF x = i])
                END                                                         AS valid_prefix,
           CASE WHEN count(*) = max(attempt_index) THEN count(*)
                ELSE len([x FOR x, i IN list_sort(list(attempt_index)) IF x = i]) END
                                                                            AS settled_prefix,
           NOT arg_max(valid, attempt_index)                                AS ended_in_error,
           max(finished_at)                                                 AS last_finished_at,
           list_sort(list({'i': attempt_index, 'b': best}))                 AS slot_best
    FROM slots GROUP BY run_id, generation, task_index, chain_index
),
call_rows AS (
    SELECT run_id, generation, task_index, chain_index, attempt_index, cost_usd, input_tokens,
           output_tokens, error
    FROM calls WHERE keys IS NULL
    UNION ALL
    SELECT c.run_id, c.generation, c.task_index, c.chain_index, c.attempt_index, c.cost_usd,
           c.input_tokens, c.output_tokens, c.error
    FROM calls c SEMI JOIN chosen k USING (run_id, generation, task_index, chain_index)
    WHERE keys IS NOT NULL
),
slot_spend AS (
    SELECT run_id, generation, task_index, chain_index, attempt_index,
           sum(cost_usd) AS cost_usd, count(cost_usd) AS n_priced,
           sum(coalesce(input_tokens, 0) + coalesce(output_tokens, 0))::BIGINT AS tokens,
           sum(input_tokens)::BIGINT AS input_tokens, sum(output_tokens)::BIGINT AS output_tokens,
           n_unpriced_calls(cost_usd, error) AS n_unpriced,
           count(*) FILTER (WHERE error IS NOT NULL) AS n_failed
    FROM call_rows GROUP BY ALL
),
-- each chain's valid slots in order (sorting structs by their first field is cheaper than an
-- ordered aggregate)
lists AS (
    SELECT s.run_id, s.generation, s.task_index, s.chain_index,
           list_sort(list({'i': s.attempt_index, 'c': p.cost_usd, 't': coalesce(p.tokens, 0)})) AS slots
    FROM slots s
    LEFT JOIN slot_spend p USING (run_id, generation, task_index, chain_index, attempt_index)
    WHERE s.valid
    GROUP BY ALL
),
priced AS (
    SELECT run_id, generation, task_index, chain_index, bool_or(n_priced > 0) AS priced,
           sum(input_tokens)::BIGINT AS input_tokens, sum(output_tokens)::BIGINT AS output_tokens,
           sum(cost_usd) AS spent_usd, sum(n_unpriced)::BIGINT AS n_unpriced_calls,
           sum(n_failed)::BIGINT AS n_failed_calls,
           list_sort(list({'i': attempt_index, 'cost_usd': cost_usd, 'tokens': tokens})) AS spend_by_slot
    FROM slot_spend GROUP BY ALL
)
-- the valid prefix's slots are the first valid_prefix of the valid ones
SELECT f.* EXCLUDE (slot_best),
       list_transform(list_slice(coalesce(l.slots, []), 1, f.valid_prefix), x -> x.c) AS cost_usd,
       list_transform(list_slice(coalesce(l.slots, []), 1, f.valid_prefix), x -> x.t) AS tokens,
       coalesce(list_sum(list_transform(l.slots, x -> x.c)), 0.0)::DOUBLE       AS valid_cost_usd,
       coalesce(list_sum(list_transform(l.slots, x -> x.t)), 0)::BIGINT         AS valid_tokens,
       coalesce(pr.priced, false)                                               AS priced,
       pr.input_tokens, pr.output_tokens, pr.spent_usd,
       coalesce(pr.n_unpriced_calls, 0)::BIGINT                                 AS n_unpriced_calls,
       coalesce(pr.n_failed_calls, 0)::BIGINT                                   AS n_failed_calls,
       coalesce(pr.spend_by_slot, [])                                           AS spend_by_slot,
       f.slot_best
FROM facts f
LEFT JOIN lists l USING (run_id, generation, task_index, chain_index)
LEFT JOIN priced pr USING (run_id, generation, task_index, chain_index);

-- The chain_kept rows of the chosen runs' current generations, with each run's number (run_no: its
-- position in run_id order among the chosen runs, as in current_attempts_of), metric, k and chains.
CREATE OR REPLACE MACRO chain_kept_current_of(run_ids := NULL) AS TABLE
WITH numbered AS (
    SELECT run_id, generation, metric, k, chains, row_number() OVER (ORDER BY run_id) AS run_no
    FROM runs
    WHERE run_ids IS NULL OR list_contains(run_ids, run_id)
)
SELECT c.*, n.run_no, n.metric, n.k, n.chains
FROM chain_kept c
JOIN numbered n ON c.run_id = n.run_id AND c.generation = n.generation
-- A lake has no primary key: should two writers have kept the same chain at once, the row that
-- saw more of it counts.
--lake-only: QUALIFY row_number() OVER (PARTITION BY c.run_id, c.task_index, c.chain_index ORDER BY c.n_attempts DESC, c.last_finished_at DESC) = 1
;

-- The per-chain substrate every figure starts from: one row per (run, task, chain) of the run's
-- current generation with at least one attempt that counts (chain_index is 1 but for a seq@k run
-- with `chains:`; a pass@k run's row is its task, its slots the samples), read from chain_kept
-- (one row per chain, never the attempts): its counts (n_attempts, n_valid, n_error, n_success),
-- the first success and the first error, valid_prefix, settled_prefix, ended_in_error (see
-- chain_kept_rows); then, for a seq@k chain and each way of reading errors, the attempt of its
-- first success (event_*) or, for an unsolved chain known only through attempt c < K, that
-- censoring point (censored_*); neither when it is known unsolved through K:
--   event_at, censored_at: errors censor (the default): a chain whose next slot errored or has not
--     run yet is censored after its last valid attempt (Kaplan-Meier over attempts);
--   event_if_failures, censored_if_failures: errored attempts are failed ones, and a chain that
--     stopped on an error is unsolved through K (only a chain still running is censored);
--   event_if_successes, censored_if_successes: an errored attempt is a success at its index;
-- then its spend (cost_usd, tokens, valid_cost_usd, valid_tokens, priced: chain_kept_rows). run_no
-- is the run's position in run_id order among the chosen runs, as in current_attempts_of.
CREATE OR REPLACE MACRO chain_outcomes_of(run_ids := NULL) AS TABLE
WITH o AS (
    SELECT run_id, run_no, task_index, chain_index, metric, k, chains, n_attempts, n_valid, n_error,
           n_success, first_success, first_error, valid_prefix, settled_prefix, ended_in_error,
           cost_usd, tokens, valid_cost_usd, valid_tokens, priced
    FROM chain_kept_current_of(run_ids := run_ids)
)
-- (columns named, not * EXCLUDE (...): DuckDB stores an EXCLUDE list in no fixed order, so a
-- database copied from the template and one built from this file would differ in text)
SELECT run_id, run_no, task_index, chain_index, metric, k, chains, n_attempts, n_valid, n_error,
       n_success, first_success, first_error, valid_prefix, settled_prefix, ended_in_error,
       CASE WHEN metric = 'seq@k' AND first_success <= valid_prefix THEN first_success END
                                                                            AS event_at,
       CASE WHEN metric = 'seq@k' AND NOT coalesce(first_success <= valid_prefix, false)
                 AND valid_prefix < k THEN valid_prefix END                 AS censored_at,
       CASE WHEN metric = 'seq@k' AND first_success <= settled_prefix THEN first_success END
                                                                            AS event_if_failures,
       CASE WHEN metric = 'seq@k' AND NOT coalesce(first_success <= settled_prefix, false)
                 AND NOT ended_in_error AND settled_prefix < k THEN settled_prefix END
                                                                            AS censored_if_failures,
       CASE WHEN metric = 'seq@k' AND least(first_success, first_error) <= settled_prefix
            THEN least(first_success, first_error) END                     AS event_if_successes,
       CASE WHEN metric = 'seq@k'
                 AND NOT coalesce(least(first_success, first_error) <= settled_prefix, false)
                 AND settled_prefix < k THEN settled_prefix END             AS censored_if_successes,
       cost_usd, tokens, valid_cost_usd, valid_tokens, priced
FROM o;

-- chain_outcomes_of without its spend.
CREATE OR REPLACE MACRO chain_facts_of(run_ids := NULL) AS TABLE
SELECT run_id, run_no, task_index, chain_index, metric, k, chains, n_attempts, n_valid, n_error,
       n_success, first_success, first_error, valid_prefix, settled_prefix, ended_in_error,
       event_at, censored_at, event_if_failures, censored_if_failures, event_if_successes,
       censored_if_successes
FROM chain_outcomes_of(run_ids := run_ids);

-- chain_outcomes_of for every run.
CREATE OR REPLACE VIEW chain_outcomes AS SELECT * FROM chain_outcomes_of();

-- known_to of task_outcomes_of, from a chain's columns (chain_kept's): one definition for the
-- figures that read chain_kept without task_outcomes_of's row per chain (run_curve_of's soft score).
CREATE OR REPLACE MACRO known_to_of(errors_as_failures, metric, ended_in_error, k, valid_prefix,
                                    settled_prefix) AS
    CASE WHEN NOT errors_as_failures THEN valid_prefix
         WHEN metric = 'seq@k' AND ended_in_error THEN k
         ELSE settled_prefix END;

-- One row per (run, task, chain) with at least one attempt: chain_outcomes_of's counts, first
-- success and prefixes, then the two figures errors_as_failures changes for the complete-case
-- figures (seq_k's first-t figure, the soft score): n_samples (valid attempts, plus errored ones
-- as failures) and known_to (the last t through which an unsolved chain is known to be unsolved:
-- the valid prefix; as failures, the settled prefix, or K for a seq@k chain that stopped on an
-- error).
CREATE OR REPLACE MACRO task_outcomes_of(errors_as_failures, run_ids := NULL) AS TABLE
SELECT run_id, task_index, chain_index, run_no, metric, k, chains, n_attempts, n_valid, n_error,
       n_success, first_success, valid_prefix, settled_prefix, ended_in_error,
       n_valid + CASE WHEN errors_as_failures THEN n_error ELSE 0 END AS n_samples,
       known_to_of(errors_as_failures, metric, ended_in_error, k, valid_prefix, settled_prefix)
                                                                    AS known_to
FROM chain_facts_of(run_ids := run_ids);

-- task_outcomes_of with errors excluded, every run.
CREATE OR REPLACE VIEW task_outcomes AS SELECT * FROM task_outcomes_of(false);

-- task_outcomes_of(false, run_ids) without run_no, for pages that need it fast (the viewer): since
-- chain_kept, the same one row per chain.
CREATE OR REPLACE MACRO task_outcomes_fast_of(run_ids := NULL) AS TABLE
SELECT * EXCLUDE (run_no) FROM task_outcomes_of(false, run_ids := run_ids);

-- The kept chains of the given runs (NULL: all), counted by what a run's figures read of them, in one
-- pass over chain_kept (the run list, a run page's header and `seqk status` each read it once: they
-- read the kept chains three and two times before, 0.6 s of the run list's first request at 10 M
-- attempts). In a run of one chain a task, the chains in the same state share a row and n counts
-- them: a few hundred rows a run, whatever its tasks; in a seq@k run with `chains:` each chain has a
-- row of its own (task_index, chain_index; NULL in a run of one chain), which its figures group by
-- task. The state: n_samples (its valid attempts) and n_success; event and censored as run_curve
-- reads errors by default (the attempt of the first success where every attempt before it was
-- valid; for an unsolved chain that stopped short of k after its last valid attempt, that
-- attempt's index); done (k valid attempts, or a seq@k chain solved) and passed (a valid success)
-- as run_progress_of counts them. Then the state's sums: n_error, last_finished_at (the latest),
-- the calls' input_tokens and output_tokens, spent_usd as an exact_partial (a run's exact_total of
-- these rows is exact_sum over its chains, bit for bit), priced (any),
-- n_unpriced_calls and n_failed_calls.
CREATE OR REPLACE MACRO chain_tally_of(run_ids := NULL) AS TABLE
SELECT run_id, metric, k, chains,
       CASE WHEN chains > 1 THEN task_index END                          AS task_index,
       CASE WHEN chains > 1 THEN chain_index END                         AS chain_index,
       n_valid                                                           AS n_samples,
       n_success,
       CASE WHEN metric = 'seq@k' AND first_success <= valid_prefix THEN first_success END AS event,
       CASE WHEN metric = 'seq@k' AND NOT coalesce(first_success <= valid_prefix, false)
                 AND valid_prefix < k THEN valid_prefix END               AS censored,
       n_valid >= k OR (metric = 'seq@k' AND first_success IS NOT NULL)  AS done,
       first_success IS NOT NULL                                         AS passed,
       count(*)                                                          AS n,
       sum(n_error)::BIGINT                                              AS n_error,
       max(last_finished_at)                                             AS last_finished_at,
       sum(input_tokens)::BIGINT                                         AS input_tokens,
       sum(output_tokens)::BIGINT                                        AS output_tokens,
       exact_partial(spent_usd)                                          AS spent_usd,
       bool_or(priced)                                                   AS priced,
       sum(n_unpriced_calls)::BIGINT                                     AS n_unpriced_calls,
       sum(n_failed_calls)::BIGINT                                       AS n_failed_calls
FROM chain_kept_current_of(run_ids := run_ids)
GROUP BY ALL;

-- run_progress_of's rows (below) from the chain_tally_of rows of the caller's table or CTE named
-- `tally` (read by query_table), for the runs of run_ids (NULL: all), so that a query which reads
-- the tally for its other figures reads the kept chains once.
CREATE OR REPLACE MACRO run_progress_from(tally, run_ids := NULL) AS TABLE
-- A task: its chain, in a run of one chain a task (n of them a row); its chains taken together,
-- in a seq@k run with `chains:` (a row a chain).
WITH tasks_done AS (
    SELECT run_id, sum(n) AS n_started, sum(n) FILTER (WHERE done) AS n_finished,
           sum(n) FILTER (WHERE passed) AS n_passed, sum(n * n_samples) AS n_valid,
           sum(n_error) AS n_error, max(last_finished_at) AS last_finished_at
    FROM query_table(tally) WHERE chains = 1
    GROUP BY run_id
    UNION ALL
    SELECT run_id, 1, CASE WHEN count(*) FILTER (WHERE done) >= max(chains) THEN 1 ELSE 0 END,
           CASE WHEN bool_or(passed) THEN 1 ELSE 0 END, sum(n_samples), sum(n_error),
           max(last_finished_at)
    FROM query_table(tally) WHERE chains > 1
    GROUP BY run_id, task_index
),
per_run AS (
    SELECT run_id,
           sum(n_started)::BIGINT                       AS n_started,
           coalesce(sum(n_finished), 0)::BIGINT         AS n_finished,
           coalesce(sum(n_passed), 0)::BIGINT           AS n_passed,
           sum(n_valid)::BIGINT                         AS n_valid_attempts,
           sum(n_error)::BIGINT                         AS n_error_attempts,
           max(last_finished_at)                        AS last_finished_at
    FROM tasks_done GROUP BY run_id
),
registered AS (
    SELECT run_id, count(*) AS n_tasks FROM tasks
    WHERE run_ids IS NULL OR list_contains(run_ids, run_id)
    GROUP BY run_id
)
SELECT r.run_id,
       coalesce(g.n_tasks, 0)                             AS n_tasks,
       coalesce(p.n_started, 0)                           AS n_started,
       coalesce(p.n_finished, 0)                          AS n_finished,
       coalesce(p.n_passed, 0)                            AS n_passed,
       coalesce(p.n_valid_attempts, 0)::BIGINT            AS n_valid_attempts,
       coalesce(p.n_error_attempts, 0)::BIGINT            AS n_error_attempts,
       p.last_finished_at
FROM runs r
LEFT JOIN registered g USING (run_id)
LEFT JOIN per_run p USING (run_id)
WHERE run_ids IS NULL OR list_contains(run_ids, r.run_id);

-- One row per run of the given runs (NULL: all): n_tasks registered; n_started, tasks with an
-- attempt that counts; n_finished, tasks whose every chain (runs.chains) is done: k valid
-- attempts, or a seq@k chain solved; n_passed, tasks with a valid success in any chain;
-- n_valid_attempts and n_error_attempts, the slots that count, valid or holding only errors;
-- last_finished_at, when its current generation's last attempt finished (NULL before any).
-- The one definition of a run's progress: `seqk status` and the viewer read it (through
-- run_progress_from where they read the tally for more).
CREATE OR REPLACE MACRO run_progress_of(run_ids := NULL) AS TABLE
WITH progress_tally AS MATERIALIZED (
    SELECT * FROM chain_tally_of(run_ids := run_ids)
)
SELECT * FROM run_progress_from('progress_tally', run_ids := run_ids);

-- run_progress_of for every run.
CREATE OR REPLACE VIEW run_progress AS SELECT * FROM run_progress_of();

-- ---------------------------------------------------------------------------
-- Errors censor a chain (docs/metrics-and-statistics.md). A seq@k chain is a survival time in
-- attempts: its first success, or, when an error (or a run still going) stops it after attempt c
-- < K, censored at c. The estimand seq@d = P(a chain solves the task within d attempts) is then
-- estimated by Kaplan-Meier (1958): h_j = chains solved at attempt j / chains with a valid attempt
-- j, seq@d = 1 - prod_{j<=d} (1 - h_j). A task's own value is Efron's (1967) redistribution to the
-- right: 1 if solved by d, 0 if known unsolved through d, 1 - S(d)/S(c) if censored at c < d; the
-- mean over chains equals the Kaplan-Meier estimate exactly (self-consistency). Policies:
-- 'censored' (the default), 'failures' (errors_as_failures), 'successes' (the other end of the
-- range); chain_facts_of says what each makes of a chain.

-- One row per seq@k chain and policy ('censored', 'failures', 'successes'): the attempt of its
-- first success (event) or its censoring point (censored); neither when it is known unsolved
-- through K. Spend, on the 'censored' rows only (spend is the policy's, however errors are
-- scored): last, the last attempt the chain is at risk for (coalesce(event_at, censored_at, K)),
-- and chain_outcomes_of's cost_usd and tokens lists.
CREATE OR REPLACE MACRO chain_policies_of(run_ids := NULL) AS TABLE
WITH f AS MATERIALIZED (
    SELECT * FROM chain_outcomes_of(run_ids := run_ids) WHERE metric = 'seq@k'
)
SELECT run_id, run_no, task_index, chain_index, k, chains, 'censored' AS policy,
       event_at AS event, censored_at AS censored, coalesce(event_at, censored_at, k) AS last,
       cost_usd, tokens
FROM f
UNION ALL
SELECT run_id, run_no, task_index, chain_index, k, chains, 'failures', event_if_failures,
       censored_if_failures, NULL, NULL, NULL
FROM f
UNION ALL
SELECT run_id, run_no, task_index, chain_index, k, chains, 'successes', event_if_successes,
       censored_if_successes, NULL, NULL, NULL
FROM f;

-- Efron's redistribution to the right: a chain's value at t given its event or censoring point
-- and the survival curve S at t and at its censoring point (s_c; 1 at c = 0).
CREATE OR REPLACE MACRO efron_value(event, censored, t, s_t, s_c) AS
    CASE WHEN event <= t THEN 1.0::DOUBLE
         WHEN censored IS NULL OR censored >= t THEN 0.0::DOUBLE
         WHEN s_c > 0 THEN 1.0 - s_t / s_c
         ELSE 1.0::DOUBLE END;

-- A chain's spend through d, Efron's redistribution of it: what it spent on attempts
-- 1..min(d, last) (spend: its list of what each attempt of its valid prefix cost; last: the last
-- attempt it is at risk for), plus, censored at c < d, the run's expected spend of attempts c+1..d
-- given survival to c, (A(d) - A(c)) / S(c) (a_d, a_c: run_survival_of's cost_usd_through or
-- tokens_through at d and c, NULL at c = 0; s_c: its survival at c, NULL at c = 0).
CREATE OR REPLACE MACRO efron_spend(spend, d, last, event, censored, a_d, a_c, s_c) AS
    coalesce(list_sum(list_slice(spend, 1, least(d, last))), 0.0)
    + CASE WHEN event IS NULL AND censored < d
           THEN (a_d - coalesce(a_c, 0.0)) / coalesce(s_c, 1.0) ELSE 0.0 END;

-- One row per (seq@k run, policy, attempt j = 1..K), every chain of the run pooled (one chain or
-- several): at_risk (chains with a valid attempt j, unsolved before it), events (solved at j),
-- censored (chains that reached j unsolved but whose attempt j is not valid), hazard = events /
-- at_risk (0 when nothing is at risk), survival S(j) = prod (1 - hazard), survival_before S(j - 1),
-- censoring_survival G(j) = prod at_risk / (at_risk + censored) (the chance a chain's attempts
-- 1..j are all valid: Kaplan-Meier of the censoring; S(j) G(j) is the share of chains known
-- unsolved through j); mean_cost_usd and mean_tokens: the mean spend of attempt j over the chains
-- at risk, and cost_usd_through / tokens_through: one chain's expected spend through j,
-- A(j) = sum_{i<=j} S(i - 1) x that mean (policy 'censored' only: spend is the policy's,
-- however errors are scored).
CREATE OR REPLACE MACRO run_survival_of(run_ids := NULL) AS TABLE
WITH p AS (
    SELECT * FROM chain_policies_of(run_ids := run_ids) WHERE policy = 'censored'
),
-- the chains by state under each policy (chain_policies_of's event and censored): counted over the
-- chains once, then per policy (grouping chain_policies_of's row per chain and policy took twice
-- as long)
states AS (
    SELECT s.run_id, x.policy, s.k, x.event, x.censored, sum(s.n)::BIGINT AS n
    FROM (SELECT run_id, k, event_at, censored_at, event_if_failures, censored_if_failures,
                 event_if_successes, censored_if_successes, count(*) AS n
          FROM chain_facts_of(run_ids := run_ids) WHERE metric = 'seq@k' GROUP BY ALL) s,
         (SELECT unnest([{'policy': 'censored', 'event': s.event_at, 'censored': s.censored_at},
                         {'policy': 'failures', 'event': s.event_if_failures,
                          'censored': s.censored_if_failures},
                         {'policy': 'successes', 'event': s.event_if_successes,
                          'censored': s.censored_if_successes}], recursive := true)) x
    GROUP BY ALL
),
counts AS (
    SELECT s.run_id, s.policy, g.j::INTEGER AS j,
           coalesce(sum(s.n) FILTER (WHERE g.j <= coalesce(s.event, s.censored, s.k)), 0)::BIGINT
               AS at_risk,
           coalesce(sum(s.n) FILTER (WHERE s.event = g.j), 0)::BIGINT AS events,
           coalesce(sum(s.n) FILTER (WHERE s.event IS NULL AND s.censored = g.j - 1), 0)::BIGINT
               AS censored
    FROM states s, range(1, s.k + 1) AS g(j)
    GROUP BY s.run_id, s.policy, g.j
),
spend AS (
    SELECT run_id, j, exact_sum(cost) AS cost_usd, exact_sum(tokens) AS tokens
    FROM (SELECT run_id, last, unnest(generate_series(1, len(cost_usd))) AS j,
                 unnest(cost_usd) AS cost, unnest(tokens) AS tokens
          FROM p)
    WHERE j <= last
    GROUP BY run_id, j
),
curves AS (
    SELECT c.*, h.hazard, h.mean_cost_usd, h.mean_tokens,
           product(1.0 - h.hazard) OVER (PARTITION BY c.run_id, c.policy ORDER BY c.j) AS survival,
           coalesce(product(1.0 - h.hazard) OVER (PARTITION BY c.run_id, c.policy ORDER BY c.j
                                                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
                    1.0) AS survival_before,
           product(CASE WHEN c.at_risk + c.censored > 0 THEN c.at_risk / (c.at_risk + c.censored)
                        ELSE 1.0 END)
               OVER (PARTITION BY c.run_id, c.policy ORDER BY c.j) AS censoring_survival
    FROM counts c
    LEFT JOIN spend p ON p.run_id = c.run_id AND p.j = c.j AND c.policy = 'censored',
    LATERAL (SELECT CASE WHEN c.at_risk > 0 THEN c.events / c.at_risk ELSE 0.0 END AS hazard,
                    CASE WHEN c.policy = 'censored' AND c.at_risk > 0
                         THEN coalesce(p.cost_usd, 0.0) / c.at_risk ELSE 0.0 END AS mean_cost_usd,
                    CASE WHEN c.policy = 'censored' AND c.at_risk > 0
                         THEN coalesce(p.tokens, 0) / c.at_risk ELSE 0.0 END AS mean_tokens) h
)
SELECT run_id, policy, j, at_risk, events, censored, hazard, survival, survival_before,
       censoring_survival, mean_cost_usd, mean_tokens,
       sum(survival_before * mean_cost_usd) OVER (PARTITION BY run_id, policy ORDER BY j)
           AS cost_usd_through,
       sum(survival_before * mean_tokens) OVER (PARTITION BY run_id, policy ORDER BY j)
           AS tokens_through
FROM curves;

-- run_survival_of for every seq@k run.
CREATE OR REPLACE VIEW run_survival AS SELECT * FROM run_survival_of();

-- One row per (run, task, t), t = 1..K: the task's value for its run's metric at t. seq@k: the
-- mean over its chains of each chain's Efron redistribution of the run's Kaplan-Meier curve (every
-- chain of the run pooled, run_survival_of: 1 solved within t attempts, 0 known unsolved through
-- t, 1 - S(t)/S(c) censored at c < t). pass@k: Chen's unbiased estimate over its valid samples,
-- NULL when it has fewer than t. value: errors censor (errors_as_failures: as failures);
-- value_if_failures, value_if_successes: errored attempts (samples) counted as failures, as
-- successes at their index. n_censored: the task's chains censored before t (0 for pass@k).
-- first_t_value: seq_k's complete-case figure, 1/0 solved within the first t attempts or samples,
-- NULL when unknown (as errors_as_failures reads them).
CREATE OR REPLACE MACRO task_curve_of(errors_as_failures, run_ids := NULL) AS TABLE
WITH o AS MATERIALIZED (
    SELECT * FROM task_outcomes_of(errors_as_failures, run_ids := run_ids)
),
facts AS (
    SELECT * FROM chain_facts_of(run_ids := run_ids) WHERE metric = 'pass@k'
),
p AS MATERIALIZED (
    SELECT * FROM chain_policies_of(run_ids := run_ids)
),
rs AS MATERIALIZED (
    SELECT run_id, policy, j, survival FROM run_survival_of(run_ids := run_ids)
),
-- each chain's Efron value on its run's curve, averaged over the task's chains
seq_points AS (
    SELECT any_value(p.run_id) AS run_id, p.run_no, p.task_index, p.policy, g.t::INTEGER AS t,
           exact_avg(efron_value(p.event, p.censored, g.t, st.survival, coalesce(sc.survival, 1.0)))
               AS value,
           bool_or(coalesce(p.censored < g.t, false)) AS is_censored
    FROM p
    CROSS JOIN LATERAL range(1, p.k + 1) AS g(t)
    JOIN rs st ON st.run_id = p.run_id AND st.policy = p.policy AND st.j = g.t
    LEFT JOIN rs sc ON sc.run_id = p.run_id AND sc.policy = p.policy AND sc.j = p.censored
    GROUP BY p.run_no, p.task_index, p.policy, g.t
),
seq_values AS (
    SELECT any_value(run_id) AS run_id, run_no, task_index, t,
           any_value(value) FILTER (WHERE policy = CASE WHEN errors_as_failures THEN 'failures'
                                                        ELSE 'censored' END) AS value,
           any_value(value) FILTER (WHERE policy = 'failures') AS value_if_failures,
           any_value(value) FILTER (WHERE policy = 'successes') AS value_if_successes,
           count(*) FILTER (WHERE is_censored AND policy = CASE WHEN errors_as_failures
                                                     THEN 'failures' ELSE 'censored' END) AS n_censored
    FROM seq_points
    GROUP BY run_no, task_index, t
),
pass_values AS (
    SELECT f.run_id, f.run_no, f.task_index, g.t::INTEGER AS t,
           pass_at_t_unbiased(f.n_valid + CASE WHEN errors_as_failures THEN f.n_error ELSE 0 END,
                              f.n_success, g.t) AS value,
           pass_at_t_unbiased(f.n_valid + f.n_error, f.n_success, g.t) AS value_if_failures,
           pass_at_t_unbiased(f.n_valid + f.n_error, f.n_success + f.n_error, g.t)
               AS value_if_successes,
           0 AS n_censored
    FROM facts f, range(1, f.k + 1) AS g(t)
),
first_t AS (
    SELECT any_value(o.run_id) AS run_id, o.run_no, o.task_index, g.t::INTEGER AS t,
           any_value(o.metric) AS metric, any_value(o.k) AS k,
           exact_avg(first_t_outcome(o.first_success, o.known_to, g.t)) AS first_t_value
    FROM o, range(1, o.k + 1) AS g(t)
    GROUP BY o.run_no, o.task_index, g.t
)
SELECT f.run_id, f.task_index, f.t, f.metric, f.k, v.value, f.first_t_value,
       v.value_if_failures, v.value_if_successes, v.n_censored::BIGINT AS n_censored
FROM first_t f
JOIN (SELECT * FROM seq_values UNION ALL BY NAME SELECT * FROM pass_values) v
  USING (run_no, task_index, t);

-- task_curve_of with errors censoring, every run.
CREATE OR REPLACE VIEW task_curve AS SELECT * FROM task_curve_of(false);

-- One row per (run, task): the task's value at t = 1, 2, K-1 and K (task_curve_of's), and
-- first_at_1: attempt or sample 1 alone, 1/0 (NULL when unknown): seq@1's complete-case figure for
-- seq@k, a pass@k run's sample 1 (what the framing effect compares when seeds match).
CREATE OR REPLACE MACRO task_points_of(errors_as_failures, run_ids := NULL) AS TABLE
SELECT run_id, task_index, any_value(metric) AS metric, any_value(k) AS k,
       any_value(first_t_value) FILTER (WHERE t = 1) AS first_at_1,
       any_value(value) FILTER (WHERE t = 1) AS at_1,
       any_value(value) FILTER (WHERE t = least(2, k)) AS at_2,
       any_value(value) FILTER (WHERE t = greatest(k - 1, 1)) AS at_k_minus_1,
       any_value(value) FILTER (WHERE t = k) AS at_k
FROM task_curve_of(errors_as_failures, run_ids := run_ids)
GROUP BY run_id, task_index;

-- One row per (run, t): metric@t. value: seq@t by Kaplan-Meier over attempts (errors censor; with
-- errors_as_failures, errored attempts count as failures and a chain that stopped on one is
-- unsolved through K), for a run with several chains the mean over tasks of each task's own curve
-- (task_curve_of); pass@t by Chen et al.'s unbiased estimator over each task's valid samples.
-- value_if_failures, value_if_successes: the same with every errored attempt (sample) counted as a
-- failure, and as a success at its index: the range errors leave open (NULL when the run has no
-- errored attempt). n_tasks: tasks with a value at t (seq@k: every started task; pass@k: tasks
-- with at least t valid samples); n_left_out: the other started tasks; n_censored: chains (tasks,
-- for a run with several chains) censored before t. low, high: the 95% Wilson interval when no
-- chain is censored before t (the estimate is then a plain proportion), NULL otherwise (the report
-- gives a task bootstrap interval there); se: seq_k's standard error (sample sd of the per-task
-- values / sqrt(n_tasks)). first_t_value (n_first_t tasks): seq_k's complete-case figure, solved
-- within the first t attempts or samples, over the tasks whose outcome there is known; soft_score:
-- the mean best score within the first t over those tasks (clipped to [0, 1] after averaging for
-- a run whose soft_score_clipped). cost_usd_per_task, tokens_per_task: the expected spend of one
-- chain of t attempts (seq@k: sum_{j<=t} S(j - 1) x the mean spend of attempt j over the chains
-- with a valid attempt j, errors censoring; per task then averaged for several chains) or of t
-- samples (pass@k: t x the mean over tasks of each task's mean spend per valid sample);
-- cost_usd_per_task is NULL when no call of the run was priced. pass_all_t (pass@k): pass^t, the
-- unbiased probability that all of t samples succeed, C(c, t) / C(n, t), over the same tasks.
-- n_started and n_error_attempts are the run's, repeated on each row.
CREATE OR REPLACE MACRO run_curve_of(errors_as_failures, run_ids := NULL) AS TABLE
WITH outcomes AS MATERIALIZED (
    SELECT * FROM task_outcomes_of(errors_as_failures, run_ids := run_ids)
),
spent AS MATERIALIZED (
    SELECT run_id, metric, n_valid, valid_cost_usd, valid_tokens, priced
    FROM chain_outcomes_of(run_ids := run_ids)
),
p AS MATERIALIZED (
    SELECT * FROM chain_policies_of(run_ids := run_ids)
),
rs AS MATERIALIZED (
    SELECT * FROM run_survival_of(run_ids := run_ids)
),
value_policy AS (
    SELECT CASE WHEN errors_as_failures THEN 'failures' ELSE 'censored' END AS name
),
-- Every figure is a mean of per-task values: grouped by state where tasks share one (one-chain
-- seq@k runs, pass@k runs), per task otherwise; n: the tasks of the group.
seq_one AS (
    SELECT s.run_id, s.policy, g.t::INTEGER AS t, s.n,
           efron_value(s.event, s.censored, g.t, st.survival, coalesce(sc.survival, 1.0)) AS value,
           coalesce(s.censored < g.t, false) AS is_censored
    FROM (SELECT run_id, policy, k, event, censored, count(*) AS n
          FROM p WHERE chains = 1 GROUP BY ALL) s
    CROSS JOIN LATERAL range(1, s.k + 1) AS g(t)
    JOIN rs st ON st.run_id = s.run_id AND st.policy = s.policy AND st.j = g.t
    LEFT JOIN rs sc ON sc.run_id = s.run_id AND sc.policy = s.policy AND sc.j = s.censored
),
-- several chains: each chain's Efron value (and spend) on the run's curve, averaged per task
seq_many AS (
    SELECT any_value(p.run_id) AS run_id, p.policy, g.t::INTEGER AS t, 1 AS n,
           exact_avg(efron_value(p.event, p.censored, g.t, st.survival, coalesce(sc.survival, 1.0)))
               AS value,
           bool_or(coalesce(p.censored < g.t, false)) AS is_censored,
           exact_avg(efron_spend(p.cost_usd, g.t, p.last, p.event, p.censored, st.cost_usd_through,
                                 sc.cost_usd_through, sc.survival)) AS cost_usd,
           exact_avg(efron_spend(p.tokens, g.t, p.last, p.event, p.censored, st.tokens_through,
                                 sc.tokens_through, sc.survival)) AS tokens
    FROM (SELECT * FROM p WHERE chains > 1) p
    CROSS JOIN LATERAL range(1, p.k + 1) AS g(t)
    JOIN rs st ON st.run_id = p.run_id AND st.policy = p.policy AND st.j = g.t
    LEFT JOIN rs sc ON sc.run_id = p.run_id AND sc.policy = p.policy AND sc.j = p.censored
    GROUP BY p.run_no, p.task_index, p.policy, g.t
),
pass_groups AS (
    SELECT run_id, k, n_valid, n_success, n_error, count(*) AS n
    FROM chain_facts_of(run_ids := run_ids) WHERE metric = 'pass@k' GROUP BY ALL
),
points AS (
    SELECT run_id, policy, t, n, value, is_censored, NULL::DOUBLE AS pass_all_t FROM seq_one
    UNION ALL
    SELECT run_id, policy, t, n, value, is_censored, NULL FROM seq_many
    UNION ALL
    SELECT g.run_id, x.policy, t.t::INTEGER, g.n,
           pass_at_t_unbiased(x.n_samples, x.n_solved, t.t), false,
           CASE WHEN x.policy = 'censored' THEN pass_all_t_unbiased(g.n_valid, g.n_success, t.t) END
    FROM pass_groups g,
         (SELECT unnest([{'policy': 'censored', 'n_samples': g.n_valid, 'n_solved': g.n_success},
                         {'policy': 'failures', 'n_samples': g.n_valid + g.n_error,
                          'n_solved': g.n_success},
                         {'policy': 'successes', 'n_samples': g.n_valid + g.n_error,
                          'n_solved': g.n_success + g.n_error}], recursive := true)) x,
         range(1, g.k + 1) AS t(t)
),
success AS (
    SELECT run_id, t,
           -- sums of BIGINT are HUGEINT, which polars and pandas cannot hold
           coalesce(sum(n) FILTER (WHERE value IS NOT NULL AND policy = v.name), 0)::BIGINT AS n_tasks,
           coalesce(sum(n) FILTER (WHERE is_censored AND policy = v.name), 0)::BIGINT AS n_censored,
           -- the sums of doubles in no order of DuckDB's threads (exact_sum): the same bits each run
           exact_sum(CASE WHEN policy = v.name THEN n * value END)                   AS x,
           exact_sum(CASE WHEN policy = v.name THEN n * value * value END)           AS x2,
           exact_sum(CASE WHEN policy = 'failures' THEN n * value END)
               / nullif(sum(n) FILTER (WHERE value IS NOT NULL AND policy = 'failures'), 0)
                                                                                     AS x_failures,
           exact_sum(CASE WHEN policy = 'successes' THEN n * value END)
               / nullif(sum(n) FILTER (WHERE value IS NOT NULL AND policy = 'successes'), 0)
                                                                                     AS x_successes,
           exact_sum(CASE WHEN policy = 'censored' THEN n * pass_all_t END)         AS x_all
    FROM points, value_policy v
    GROUP BY run_id, t
),
-- seq_k's complete-case figures: the first-t outcome and the soft score (as errors_as_failures
-- reads them); tasks with the same counts computed once. n_chains_first_t: the chains whose
-- first-t outcome is known (the soft score's denominator).
first_t AS (
    SELECT y.run_id, g.t::INTEGER AS t, y.n,
           first_t_outcome(y.first_success, y.known_to, g.t) AS first_t_value,
           CASE WHEN first_t_value IS NOT NULL THEN y.n ELSE 0 END AS n_chains_first_t
    FROM (SELECT run_id, k, first_success, known_to, count(*) AS n
          FROM outcomes WHERE chains = 1 GROUP BY ALL) y,
         range(1, y.k + 1) AS g(t)
    UNION ALL
    SELECT any_value(o.run_id), g.t::INTEGER, 1,
           exact_avg(first_t_outcome(o.first_success, o.known_to, g.t)),
           count(first_t_outcome(o.first_success, o.known_to, g.t))
    FROM outcomes o, range(1, o.k + 1) AS g(t)
    WHERE o.chains > 1
    GROUP BY o.run_no, o.task_index, g.t
),
first_t_sums AS (
    SELECT run_id, t,
           coalesce(sum(n) FILTER (WHERE first_t_value IS NOT NULL), 0)::BIGINT AS n_first_t,
           exact_sum(n * first_t_value) AS x_first_t, sum(n_chains_first_t) AS n_chains_first_t
    FROM first_t GROUP BY run_id, t
),
-- Soft score: a slot's best-so-far score holds from its index to the slot before the next
-- one (through K for the last), and counts at the t where its task is counted: [1, known_to] and
-- [first_success, K]. Each such span becomes a +best / -best pair of events, summed up over t
-- below; this avoids expanding every task to K rows. The running best is kept (chain_kept), and
-- the next slot read off the chain's sorted list, so the slots stream from chain_kept to the
-- per-(run, t) sums with nothing held on the way (known_to from the chain's own columns, not
-- joined from outcomes): a score that is not 0/1 makes every slot its own value, so these rows
-- are the attempts' (10 M at 10 M attempts), read once.
spans_all AS (
    SELECT run_id, s.lo, s.best, known_to, first_success, s.hi
    FROM (SELECT run_id,
                 known_to_of(errors_as_failures, metric, ended_in_error, k, valid_prefix,
                             settled_prefix) AS known_to,
                 coalesce(first_success, k + 1) AS first_success,
                 UNNEST(list_transform(slot_best, (x, j) -> {'lo': x.i, 'best': x.b,
                                                             'hi': coalesce(slot_best[j + 1].i - 1, k)}))
                     AS s
          FROM chain_kept_current_of(run_ids := run_ids))
),
events AS (
    SELECT run_id, e.t, exact_sum(e.d) AS d
    FROM (SELECT run_id, UNNEST(list_filter([
              {'t': lo, 'd': best, 'on': lo <= least(hi, known_to)},
              {'t': least(hi, known_to) + 1, 'd': -best, 'on': lo <= least(hi, known_to)},
              {'t': greatest(lo, first_success, known_to + 1), 'd': best,
               'on': greatest(lo, first_success, known_to + 1) <= hi},
              {'t': hi + 1, 'd': -best, 'on': greatest(lo, first_success, known_to + 1) <= hi}],
              x -> x.on)) AS e
          FROM spans_all)
    GROUP BY run_id, e.t
),
-- expected spend of one chain through t: the run's curve (one chain), the mean of the tasks'
-- redistributed spends (several chains: the same when every task has as many chains)
seq_spend AS (
    SELECT run_id, j AS t, cost_usd_through AS cost_usd, tokens_through AS tokens
    FROM rs WHERE policy = 'censored'
      AND run_id IN (SELECT run_id FROM p WHERE chains = 1)
    UNION ALL
    SELECT run_id, t, exact_avg(cost_usd), exact_avg(tokens)
    FROM seq_many WHERE policy = 'censored'
    GROUP BY run_id, t
),
pass_spend AS (
    SELECT run_id, exact_avg(valid_cost_usd / n_valid) AS cost_usd,
           exact_avg(valid_tokens / n_valid) AS tokens
    FROM spent WHERE metric = 'pass@k' AND n_valid > 0
    GROUP BY run_id
),
per_run AS (
    SELECT o.run_id, o.n_started, o.n_error_attempts, s.priced,
           coalesce(ru.soft_score_clipped, false) AS soft_score_clipped
    FROM (SELECT run_id,
                 CASE WHEN max(chains) = 1 THEN count(*)
                      ELSE count(DISTINCT task_index) END AS n_started,
                 sum(n_error)::BIGINT AS n_error_attempts
          FROM outcomes GROUP BY run_id) o
    JOIN (SELECT run_id, bool_or(priced) AS priced FROM spent GROUP BY run_id) s USING (run_id)
    LEFT JOIN runs ru USING (run_id)
)
SELECT s.run_id, s.t, ru.metric, ru.k, s.n_tasks, (r.n_started - s.n_tasks)::BIGINT AS n_left_out,
       s.x / nullif(s.n_tasks, 0)                     AS value,
       CASE WHEN s.n_censored = 0 THEN wilson_low(s.x, s.n_tasks) END  AS low,
       CASE WHEN s.n_censored = 0 THEN wilson_high(s.x, s.n_tasks) END AS high,
       -- seq_k's standard error: sample sd of the per-task values / sqrt(n tasks)
       CASE WHEN s.n_tasks > 1
            THEN sqrt(greatest(s.x2 - s.x * s.x / s.n_tasks, 0.0) / (s.n_tasks - 1))
                 / sqrt(s.n_tasks)
            WHEN s.n_tasks = 1 THEN 0.0 END          AS se,
       f.n_first_t,
       f.x_first_t / nullif(f.n_first_t, 0)           AS first_t_value,
       clipped_if(r.soft_score_clipped,
                  sum(coalesce(e.d, 0.0)) OVER (PARTITION BY s.run_id ORDER BY s.t)
                      / nullif(f.n_chains_first_t, 0)) AS soft_score,
       CASE WHEN NOT r.priced THEN NULL
            WHEN ru.metric = 'seq@k' THEN q.cost_usd
            ELSE s.t * ps.cost_usd END                AS cost_usd_per_task,
       CASE WHEN ru.metric = 'seq@k' THEN coalesce(q.tokens, 0.0)
            ELSE s.t * coalesce(ps.tokens, 0.0) END   AS tokens_per_task,
       r.n_started, r.n_error_attempts,
       s.x_all / nullif(s.n_tasks, 0)                 AS pass_all_t,
       CASE WHEN r.n_error_attempts > 0 THEN s.x_failures END  AS value_if_failures,
       CASE WHEN r.n_error_attempts > 0 THEN s.x_successes END AS value_if_successes,
       s.n_censored
FROM success s
JOIN per_run r USING (run_id)
JOIN runs ru ON ru.run_id = s.run_id
JOIN first_t_sums f ON f.run_id = s.run_id AND f.t = s.t
LEFT JOIN events e ON e.run_id = s.run_id AND e.t = s.t
LEFT JOIN seq_spend q ON q.run_id = s.run_id AND q.t = s.t
LEFT JOIN pass_spend ps ON ps.run_id = s.run_id;

-- run_curve_of with errors censoring, every run.
CREATE OR REPLACE VIEW run_curve AS SELECT * FROM run_curve_of(false);

-- Each pass@k task of the frontier (frontier_tasks_under, frontier_under) with its samples and
-- successes under the policy errors_policy (as frontier_tasks_under takes it), its valid samples
-- and their spend.
CREATE OR REPLACE MACRO frontier_pass_tasks_of(errors_policy, run_ids := NULL) AS TABLE
SELECT run_id, task_index, k, n_valid, n_success, valid_cost_usd, valid_tokens,
       n_valid + CASE WHEN errors_policy = 'censored' THEN 0 ELSE n_error END AS n_samples,
       n_success + CASE WHEN errors_policy = 'successes' THEN n_error ELSE 0 END AS n_successes
FROM chain_outcomes_of(run_ids := run_ids) WHERE metric = 'pass@k';

-- Each state (k, valid samples, successes, samples and successes under the policy) of the pass@k
-- tasks of frontier_pass_tasks_of once (most tasks share one): every cell w x d <= k, its value,
-- and one chain's expected samples through d, expected_samples[d] = sum_{j<d} C(n - c, j) / C(n, j)
-- over the valid samples (spend is the policy's, however errors are scored); the spend needs a
-- valid sample, and d - 1 of them for its chance of d - 1 failures (spends).
CREATE OR REPLACE MACRO frontier_pass_states_of(errors_policy, run_ids := NULL) AS TABLE
SELECT s.k, s.n_valid, s.n_success, s.n_samples, s.n_successes, c.w, c.d,
       CASE WHEN s.n_valid >= greatest(1, c.d - 1)
            THEN pass_at_t_unbiased(s.n_samples, s.n_successes, c.w * c.d) END AS value,
       s.n_samples >= c.w * c.d AND s.n_valid >= greatest(1, c.d - 1) AS spends,
       s.expected_samples[c.d] AS expected_samples
FROM (SELECT *, list_transform(range(1, k + 1), d -> 1.0 + coalesce(list_sum(
                 [pass_all_t_unbiased(n_valid, n_valid - n_success, j) FOR j IN range(1, d)]), 0.0))
                 AS expected_samples
      FROM (SELECT DISTINCT k, n_valid, n_success, n_samples, n_successes
            FROM frontier_pass_tasks_of(errors_policy, run_ids := run_ids))) s
CROSS JOIN LATERAL (SELECT w.w::INTEGER AS w, d.d::INTEGER AS d
                    FROM range(1, s.k + 1) AS w(w), range(1, s.k + 1) AS d(d)
                    WHERE w.w * d.d <= s.k) c;

-- The width x depth frontier per task: one row per (run, task, width, depth).
-- seq@k, widths 1..runs.chains, depths 1..K. Width 1 is task_curve_of's value: one chain,
-- Efron's redistribution of the run's Kaplan-Meier curve; several chains, 1 - the task's own
-- curve. Width w >= 2 (runs with chains): w chains drawn from the task's n_i solve it within d
-- unless all w are unsolved through d; Horvitz-Thompson over the w-subsets of its chains with
-- inverse-probability-of-censoring weights, value = 1 - C(m, w) / C(n_i, w) / G(d)^w, where m is
-- the task's chains known unsolved through d and G(d) the run's censoring survival
-- (run_survival_of: errors at random strike every task alike, so G is pooled over the run's
-- chains). Each known-unsolved chain weighs 1/G(d), so the sum over subsets is a binomial
-- coefficient; the estimate is unbiased for 1 - (1 - F(d))^w (F the task's chance of a solve
-- within d), NULL when n_i < w, and may leave [0, 1] for a task (never on average).
-- pass@k: resample until success, w chains of samples each stopping at its first success, at most
-- d samples each (w x d <= k): value = 1 - C(n - c, w d) / C(n, w d), Chen et al.'s estimator over
-- the task's n valid samples with c successes, NULL when n < w d; depth 1 is pass@w.
-- cost_usd, tokens: the expected spend per task. seq@k: w x one chain's expected spend through d
-- (one chain: what it spent through min(d, its last attempt), plus, censored at c < d,
-- sum_{j=c+1..d} S(j - 1)/S(c) x the run's mean spend of attempt j: Efron's redistribution, whose
-- mean is run_survival_of's cost_usd_through; several chains: task_survival_of's cost_usd_through).
-- pass@k: w x s x sum_{j<d} C(n - c, j) / C(n, j), s the task's mean spend per valid sample,
-- assuming a sample's spend does not depend on whether it succeeds (both unbiased by Chen's
-- identity). priced: whether any call of the run was priced (cost_usd means nothing otherwise).
-- Spend is estimated with errors censoring whatever the policy says. frontier_tasks_under takes the
-- policy by name (errors_policy): 'censored' (the default: errors censor a chain; an errored sample is left out),
-- 'failures' (an errored attempt or sample is a failed one) or 'successes' (a successful one: the
-- other end of the range errors leave); frontier_tasks_of(errors_as_failures) is one of the first two.
CREATE OR REPLACE MACRO frontier_tasks_under(errors_policy, run_ids := NULL) AS TABLE
WITH o AS MATERIALIZED (
    SELECT * FROM chain_outcomes_of(run_ids := run_ids)
),
priced AS (
    SELECT run_id, bool_or(priced) AS priced FROM o GROUP BY run_id
),
p AS MATERIALIZED (
    SELECT * FROM chain_policies_of(run_ids := run_ids)
),
rs AS MATERIALIZED (
    SELECT * FROM run_survival_of(run_ids := run_ids)
),
-- each seq@k chain once: its event and censoring under the figures' policy and the survival at
-- that censoring point; under errors censoring (spend's policy), its event and censoring, the
-- run's A(c) and S(c) at that censoring point, and, for each depth d, what it spent on attempts
-- 1..min(d, last) (last: the last attempt it is at risk for; efron_spend's sum, read off the
-- sums over attempts 1..i of its valid prefix, added in the same order)
chain_once AS (
    -- (columns named, not * EXCLUDE (...): see chain_outcomes_of)
    SELECT run_id, run_no, task_index, chains, k, event, censored, s_c, last, spend_event,
           spend_censored, cost_c, tokens_c, spend_s_c,
           [CASE WHEN least(d, last, len(cost_through)) >= 1
                 THEN cost_through[least(d, last, len(cost_through))] ELSE 0.0 END
            FOR d IN range(1, k + 1)] AS cost_at,
           [CASE WHEN least(d, last, len(tokens_through)) >= 1
                 THEN tokens_through[least(d, last, len(tokens_through))] ELSE 0.0 END
            FOR d IN range(1, k + 1)] AS tokens_at
    FROM (
        SELECT v.run_id, v.run_no, v.task_index, v.chains, v.k, v.event, v.censored,
               coalesce(svc.survival, 1.0) AS s_c, c.last, c.event AS spend_event,
               c.censored AS spend_censored, scc.cost_usd_through AS cost_c,
               scc.tokens_through AS tokens_c, scc.survival AS spend_s_c,
               [coalesce(list_sum(list_slice(c.cost_usd, 1, i)), 0.0)
                FOR i IN range(1, len(c.cost_usd) + 1)] AS cost_through,
               [coalesce(list_sum(list_slice(c.tokens, 1, i)), 0.0)
                FOR i IN range(1, len(c.tokens) + 1)] AS tokens_through
        FROM (SELECT * FROM p WHERE policy = errors_policy) v
        JOIN (SELECT * FROM p WHERE policy = 'censored') c USING (run_no, task_index, chain_index)
        LEFT JOIN rs svc ON svc.run_id = v.run_id AND svc.policy = v.policy AND svc.j = v.censored
        LEFT JOIN rs scc ON scc.run_id = v.run_id AND scc.policy = 'censored' AND scc.j = c.censored
    )
),
-- each run at each depth d: S(d) under the figures' policy, A(d) under errors censoring
run_depth AS (
    SELECT sv.run_id, sv.j AS d, sv.survival, sv.censoring_survival, sd.cost_usd_through, sd.tokens_through
    FROM rs sv
    JOIN rs sd ON sd.run_id = sv.run_id AND sd.policy = 'censored' AND sd.j = sv.j
    WHERE sv.policy = errors_policy
),
-- each seq@k chain at each depth: its Efron value (the figures' policy), its redistributed spend
-- (errors censoring: efron_spend), whether it is known unsolved through d
chain_depth AS (
    SELECT o.run_id, o.run_no, o.task_index, o.chains, o.d::INTEGER AS d,
           efron_value(o.event, o.censored, o.d, r.survival, o.s_c) AS value,
           coalesce(o.event > o.d, true) AND coalesce(o.censored, o.k) >= o.d AS unsolved,
           o.cost_at + CASE WHEN o.spend_event IS NULL AND o.spend_censored < o.d
                            THEN (r.cost_usd_through - coalesce(o.cost_c, 0.0)) / coalesce(o.spend_s_c, 1.0)
                            ELSE 0.0 END AS cost_usd,
           o.tokens_at + CASE WHEN o.spend_event IS NULL AND o.spend_censored < o.d
                              THEN (r.tokens_through - coalesce(o.tokens_c, 0.0)) / coalesce(o.spend_s_c, 1.0)
                              ELSE 0.0 END AS tokens,
           r.censoring_survival
    FROM (SELECT run_id, run_no, task_index, chains, k, event, censored, s_c, spend_event, spend_censored,
                 cost_c, tokens_c, spend_s_c, unnest(range(1, k + 1)) AS d, unnest(cost_at) AS cost_at,
                 unnest(tokens_at) AS tokens_at
          FROM chain_once) o
    JOIN run_depth r ON r.run_id = o.run_id AND r.d = o.d
),
-- per task and depth: a one-chain run's chain is its task; several chains are averaged
task_depth AS (
    SELECT run_id, run_no, task_index, d, chains, value, cost_usd, tokens, 1 AS n_chains,
           unsolved::INTEGER AS n_unsolved, censoring_survival
    FROM chain_depth WHERE chains = 1
    UNION ALL
    SELECT any_value(run_id) AS run_id, run_no, task_index, d, any_value(chains) AS chains,
           exact_avg(value) AS value, exact_avg(cost_usd) AS cost_usd, exact_avg(tokens) AS tokens,
           count(*) AS n_chains, count(*) FILTER (WHERE unsolved) AS n_unsolved,
           any_value(censoring_survival) AS censoring_survival
    FROM chain_depth WHERE chains > 1
    GROUP BY run_no, task_index, d
),
seq AS (
    SELECT t.run_id, t.task_index, t.w::INTEGER AS width, t.d AS depth,
           CASE WHEN t.w = 1 THEN t.value
                WHEN t.n_chains >= t.w
                THEN 1.0 - pass_all_t_unbiased(t.n_chains, t.n_unsolved, t.w)
                           / pow(t.censoring_survival, t.w) END AS value,
           CASE WHEN t.w = 1 OR t.n_chains >= t.w THEN t.w * t.cost_usd END AS cost_usd,
           CASE WHEN t.w = 1 OR t.n_chains >= t.w THEN t.w * t.tokens END AS tokens
    FROM (SELECT *, unnest(range(1, chains + 1)) AS w FROM task_depth) t
),
pass_tasks AS (
    SELECT * FROM frontier_pass_tasks_of(errors_policy, run_ids := run_ids)
),
pass_states AS (
    SELECT * FROM frontier_pass_states_of(errors_policy, run_ids := run_ids)
),
pass AS (
    SELECT t.run_id, t.task_index, s.w AS width, s.d AS depth, s.value,
           CASE WHEN s.spends THEN s.w * t.valid_cost_usd / t.n_valid * s.expected_samples END AS cost_usd,
           CASE WHEN s.spends THEN s.w * t.valid_tokens / t.n_valid * s.expected_samples END AS tokens
    FROM pass_tasks t
    JOIN pass_states s USING (k, n_valid, n_success, n_samples, n_successes)
)
SELECT x.*, y.priced
FROM (SELECT * FROM seq UNION ALL SELECT * FROM pass) x
JOIN priced y USING (run_id);

-- frontier_tasks_under with errors censoring (errors_as_failures false) or counted as failures.
CREATE OR REPLACE MACRO frontier_tasks_of(errors_as_failures, run_ids := NULL) AS TABLE
SELECT * FROM frontier_tasks_under(CASE WHEN errors_as_failures THEN 'failures' ELSE 'censored' END,
                                   run_ids := run_ids);

-- One row per (run, width, depth): the frontier_tasks_under values averaged over the n_tasks with
-- a value there (n_left_out: the other started tasks), and the mean expected spend per task over
-- the same tasks: cost_usd_per_task (NULL when no call of the run was priced) and tokens_per_task
-- (input + output). Width 1 of a seq@k run is run_curve's seq@t and its spend; depth 1 of a pass@k
-- run is pass@w at w x its spend per sample; the other pass@k cells resample until success.
-- The means are those of frontier_tasks_under's rows (tests/store/test_frontier_sums.py holds them
-- equal), summed over the tasks' states rather than over a row per task and depth where tasks
-- share one: a one-chain seq@k run's chains from its run_survival_of curves alone, whose counts
-- are its chains' states (solved at j, censored at j - 1, the rest known unsolved through K) and
-- whose mean spend of attempt j times the chains at risk there is the sum over chains of what
-- attempt j cost (a chain's own spend through d is the sum of its attempts' through min(d, last));
-- a pass@k run's tasks grouped by state, their spend per valid sample summed. A run with several
-- chains keeps the per-task rows: its w >= 2 cells need each task's count of chains.
CREATE OR REPLACE MACRO frontier_under(errors_policy, run_ids := NULL) AS TABLE
WITH chosen AS MATERIALIZED (
    SELECT run_id, metric, chains FROM runs
    WHERE run_ids IS NULL OR list_contains(run_ids, run_id)
),
priced AS (
    SELECT run_id, bool_or(priced) AS priced FROM chain_kept_current_of(run_ids := run_ids)
    GROUP BY run_id
),
rs AS MATERIALIZED (
    SELECT s.* FROM run_survival_of(run_ids := run_ids) s
    SEMI JOIN chosen c ON c.run_id = s.run_id AND c.chains = 1
),
-- one-chain seq@k runs at depth d, the sum over chains of the Efron values (the figures' policy):
-- a chain solved at j <= d is worth 1, one censored at c = j - 1 < d 1 - S(d)/S(c), any other 0;
-- n: the run's chains, all at risk at attempt 1 but those censored at 0
one_value AS (
    SELECT d.run_id, d.j AS depth,
           exact_sum(v.events * efron_value(v.j, NULL, d.j, d.survival, 1.0)
                     + v.censored * efron_value(NULL, v.j - 1, d.j, d.survival,
                                                coalesce(c.survival, 1.0)))
               AS x,
           any_value(n.at_risk + n.censored) AS n
    FROM rs d
    JOIN rs v ON v.run_id = d.run_id AND v.policy = d.policy AND v.j <= d.j
    LEFT JOIN rs c ON c.run_id = v.run_id AND c.policy = v.policy AND c.j = v.j - 1
    JOIN rs n ON n.run_id = d.run_id AND n.policy = d.policy AND n.j = 1
    WHERE d.policy = errors_policy
    GROUP BY d.run_id, d.j
),
-- and of their redistributed spends (errors censoring, efron_spend): what attempts j <= d cost
-- the chains at risk there, plus, for the chains censored at c = j - 1 < d, (A(d) - A(c)) / S(c)
-- each (S(c) > 0 where one is: it was at risk through c unsolved; where none is, S(c) may be 0)
one_spend AS (
    SELECT d.run_id, d.j AS depth,
           exact_sum(v.at_risk * v.mean_cost_usd
                     + CASE WHEN v.censored > 0
                            THEN v.censored * (d.cost_usd_through - coalesce(c.cost_usd_through, 0.0))
                                 / coalesce(c.survival, 1.0)
                            ELSE 0.0 END) AS cost_usd,
           exact_sum(v.at_risk * v.mean_tokens
                     + CASE WHEN v.censored > 0
                            THEN v.censored * (d.tokens_through - coalesce(c.tokens_through, 0.0))
                                 / coalesce(c.survival, 1.0)
                            ELSE 0.0 END) AS tokens
    FROM rs d
    JOIN rs v ON v.run_id = d.run_id AND v.policy = d.policy AND v.j <= d.j
    LEFT JOIN rs c ON c.run_id = v.run_id AND c.policy = v.policy AND c.j = v.j - 1
    WHERE d.policy = 'censored'
    GROUP BY d.run_id, d.j
),
-- every chain has a value at every depth: n_tasks is the run's chains
seq_one AS (
    SELECT v.run_id, 1::INTEGER AS width, v.depth, v.x / v.n AS value, v.n::BIGINT AS n_tasks,
           0::BIGINT AS n_left_out,
           CASE WHEN y.priced THEN s.cost_usd / v.n END AS cost_usd_per_task,
           coalesce(s.tokens / v.n, 0.0) AS tokens_per_task
    FROM one_value v
    JOIN one_spend s USING (run_id, depth)
    JOIN priced y USING (run_id)
),
seq_many AS (
    SELECT run_id, width, depth, exact_avg(value) AS value,
           count(value) AS n_tasks, (count(*) - count(value))::BIGINT AS n_left_out,
           CASE WHEN bool_or(priced) THEN exact_avg(CASE WHEN value IS NOT NULL THEN cost_usd END) END
               AS cost_usd_per_task,
           coalesce(exact_avg(CASE WHEN value IS NOT NULL THEN tokens END), 0.0) AS tokens_per_task
    FROM frontier_tasks_under(errors_policy, run_ids := (
             SELECT coalesce(list(run_id), []::VARCHAR[]) FROM chosen
             WHERE metric = 'seq@k' AND chains > 1))
    GROUP BY run_id, width, depth
),
-- pass@k tasks by state (n of them), with the sum of their spends per valid sample
pass_groups AS (
    SELECT run_id, k, n_valid, n_success, n_samples, n_successes, count(*) AS n,
           exact_sum(CASE WHEN n_valid > 0 THEN valid_cost_usd / n_valid END) AS cost_usd,
           exact_sum(CASE WHEN n_valid > 0 THEN valid_tokens / n_valid END) AS tokens
    FROM frontier_pass_tasks_of(errors_policy, run_ids := run_ids)
    GROUP BY ALL
),
-- a task's spend at a cell is w x its spend per sample x the state's expected samples
pass AS (
    SELECT g.run_id, s.w AS width, s.d AS depth,
           exact_sum(g.n * s.value) / nullif(sum(g.n) FILTER (WHERE s.value IS NOT NULL), 0) AS value,
           coalesce(sum(g.n) FILTER (WHERE s.value IS NOT NULL), 0)::BIGINT AS n_tasks,
           coalesce(sum(g.n) FILTER (WHERE s.value IS NULL), 0)::BIGINT AS n_left_out,
           CASE WHEN any_value(y.priced)
                THEN exact_sum(CASE WHEN s.value IS NOT NULL AND s.spends
                                    THEN s.w * g.cost_usd * s.expected_samples END)
                     / nullif(sum(g.n) FILTER (WHERE s.value IS NOT NULL AND s.spends), 0) END
               AS cost_usd_per_task,
           coalesce(exact_sum(CASE WHEN s.value IS NOT NULL AND s.spends
                                   THEN s.w * g.tokens * s.expected_samples END)
                    / nullif(sum(g.n) FILTER (WHERE s.value IS NOT NULL AND s.spends), 0), 0.0)
               AS tokens_per_task
    FROM pass_groups g
    JOIN frontier_pass_states_of(errors_policy, run_ids := run_ids) s
      USING (k, n_valid, n_success, n_samples, n_successes)
    JOIN priced y ON y.run_id = g.run_id
    GROUP BY g.run_id, s.w, s.d
)
SELECT * FROM seq_one
UNION ALL SELECT * FROM seq_many
UNION ALL SELECT * FROM pass
ORDER BY run_id, width, depth;

-- frontier_under with errors censoring (errors_as_failures false) or counted as failures.
CREATE OR REPLACE MACRO frontier_of(errors_as_failures, run_ids := NULL) AS TABLE
SELECT * FROM frontier_under(CASE WHEN errors_as_failures THEN 'failures' ELSE 'censored' END,
                             run_ids := run_ids);

-- frontier_of with errors censoring, every run, and, for a run with errored attempts, the range
-- errors leave: value_if_failures and value_if_successes, each cell's value with every errored
-- attempt (sample) counted as a failure, as a success (NULL for a run without errors, whose value
-- is the only one). The ranges are computed for those runs only (three frontiers' work there).
CREATE OR REPLACE VIEW frontier AS
WITH errored AS MATERIALIZED (
    SELECT coalesce(list(DISTINCT run_id), []::VARCHAR[]) AS run_ids FROM chain_kept WHERE n_error > 0
)
SELECT f.*, lo.value AS value_if_failures, hi.value AS value_if_successes
FROM frontier_of(false) f
LEFT JOIN frontier_under('failures', run_ids := (SELECT run_ids FROM errored)) lo
       USING (run_id, width, depth)
LEFT JOIN frontier_under('successes', run_ids := (SELECT run_ids FROM errored)) hi
       USING (run_id, width, depth)
ORDER BY run_id, width, depth;

-- Which pass@k run each seq@k run is compared with: same benchmark, slice, actor model and
-- verifier and judge, and k >= the seq@k run's K (Chen's estimator gives pass@K from any k >= K
-- samples, so one pass@12 run serves a 4-chain x 3-attempt run's lift, framing and equal budget);
-- pass@k never shows feedback, so its feedback mode does not matter. A re-judging run
-- (config.rejudge_of) is never a partner: re-judging would otherwise silently change every
-- comparison; `seqk report <seq run> <re-judging run>` asks for it. choice = 1 is the one used:
-- the same k first, then the largest, then the same feedback mode, the same temperature, the
-- smallest run_id; n_candidates says how many there were. same_seed: both actors sample with the
-- same seed by the same rule (runs.config: actor.seed, seed_scheme), so attempt 1 and sample 1 of
-- a task share their seed.
CREATE OR REPLACE VIEW run_pairs AS
SELECT s.run_id AS seq_run_id, p.run_id AS pass_run_id,
       row_number() OVER (PARTITION BY s.run_id ORDER BY (p.k = s.k) DESC, p.k DESC,
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
 AND p.slice = s.slice AND p.actor_model = s.actor_model AND p.k >= s.k
 AND p.verifier = s.verifier AND p.judge_model IS NOT DISTINCT FROM s.judge_model
 AND json_extract_string(p.config, '$.rejudge_of') IS NULL;

-- One row per task a seq@k run shares with its chosen pass@k run (same task_index, same
-- content): seq@1 and seq@K (task_curve_of's per-task values), pass@1 and pass@K at the seq@k
-- run's K (Chen's estimate over the pass@k run's samples; NULL when it has fewer), the pass@k
-- run's sample 1 alone (pass_sample_1) and the pair's same_seed. run_ids, when given, selects
-- seq@k runs.
CREATE OR REPLACE MACRO paired_tasks_of(errors_as_failures, run_ids := NULL) AS TABLE
WITH pairs AS (
    SELECT x.seq_run_id, x.pass_run_id, x.same_seed, r.k
    FROM run_pairs x JOIN runs r ON r.run_id = x.seq_run_id
    WHERE x.choice = 1 AND (run_ids IS NULL OR list_contains(run_ids, x.seq_run_id))
),
seq AS (
    SELECT c.run_id, c.task_index, t.content_hash,
           any_value(c.value) FILTER (WHERE c.t = 1) AS at_1,
           any_value(c.value) FILTER (WHERE c.t = c.k) AS at_k
    FROM task_curve_of(errors_as_failures, run_ids := (SELECT list(seq_run_id) FROM pairs)) c
    JOIN tasks t USING (run_id, task_index)
    GROUP BY ALL
),
pass AS (
    SELECT o.run_id, o.task_index, t.content_hash, o.n_samples, o.n_success,
           first_t_outcome(o.first_success, o.known_to, 1) AS first_at_1
    FROM task_outcomes_of(errors_as_failures, run_ids := (SELECT list(pass_run_id) FROM pairs)) o
    JOIN tasks t USING (run_id, task_index)
)
SELECT x.seq_run_id, x.pass_run_id, s.task_index,
       s.at_1 AS seq_at_1, pass_at_t_unbiased(p.n_samples, p.n_success, 1) AS pass_at_1,
       s.at_k AS seq_at_k, pass_at_t_unbiased(p.n_samples, p.n_success, x.k) AS pass_at_k,
       p.first_at_1 AS pass_sample_1, x.same_seed
FROM pairs x
JOIN seq s ON s.run_id = x.seq_run_id
JOIN pass p ON p.run_id = x.pass_run_id AND p.task_index = s.task_index
           AND p.content_hash = s.content_hash;

-- paired_tasks_of with errors censoring, every seq@k run.
CREATE OR REPLACE VIEW paired_tasks AS SELECT * FROM paired_tasks_of(false);

-- One row per seq@k run with a pass@k partner: feedback lift = seq@K - pass@K on the n_shared
-- tasks both have a value for at K (the means of paired_tasks_of's per-task values; the report
-- re-estimates the survival curve on the shared tasks, which is the same when every task is
-- shared); flips (n_seq_only: pass@K failed and seq@K solved; n_pass_only: the reverse; tasks
-- whose values are 0/1); discordance: the expected share of tasks solved by one run only, the mean
-- of s (1 - p) + p (1 - s) over per-task values s and p (the flips' share when every value is
-- 0/1), what `seqk plan` sizes a study from; framing effect = seq@1 - pass@1 on the n_shared_at_1
-- tasks both have at 1, where pass@1 is the pass@k run's sample 1 when the seeds match
-- (framing_vs says which): same seed, same task, only the prompt's framing differs.
CREATE OR REPLACE MACRO feedback_lift_of(errors_as_failures, run_ids := NULL) AS TABLE
SELECT r.benchmark, r.slice, r.actor_model, r.feedback_mode, r.k,
       x.seq_run_id, x.pass_run_id, x.n_shared, x.seq_at_k, x.pass_at_k,
       x.seq_at_k - x.pass_at_k AS lift, x.n_seq_only, x.n_pass_only, x.n_shared_at_1,
       x.seq_at_1, x.pass_at_1, x.seq_at_1 - x.pass_at_1 AS framing_effect,
       CASE WHEN x.same_seed THEN 'pass@k sample 1 (same seed)' ELSE 'pass@1 (Chen mean)' END
           AS framing_vs,
       x.discordance
FROM (
    SELECT seq_run_id, any_value(pass_run_id) AS pass_run_id, any_value(same_seed) AS same_seed,
           count(*) FILTER (WHERE seq_at_k IS NOT NULL AND pass_at_k IS NOT NULL) AS n_shared,
           exact_avg(CASE WHEN pass_at_k IS NOT NULL THEN seq_at_k END) AS seq_at_k,
           exact_avg(CASE WHEN seq_at_k IS NOT NULL THEN pass_at_k END) AS pass_at_k,
           count(*) FILTER (WHERE seq_at_k = 1 AND pass_at_k = 0)  AS n_seq_only,
           count(*) FILTER (WHERE seq_at_k = 0 AND pass_at_k = 1)  AS n_pass_only,
           exact_avg(seq_at_k * (1 - pass_at_k) + pass_at_k * (1 - seq_at_k)) AS discordance,
           count(*) FILTER (WHERE seq_at_1 IS NOT NULL AND pass_at_1 IS NOT NULL)
                                                                   AS n_shared_at_1,
           exact_avg(CASE WHEN pass_at_1 IS NOT NULL THEN seq_at_1 END) AS seq_at_1,
           exact_avg(CASE WHEN seq_at_1 IS NOT NULL THEN pass_at_1 END) AS pass_at_1
    FROM (SELECT * REPLACE (CASE WHEN same_seed THEN pass_sample_1 ELSE pass_at_1 END
                            AS pass_at_1)
          FROM paired_tasks_of(errors_as_failures, run_ids := run_ids))
    GROUP BY seq_run_id
) x
JOIN runs r ON r.run_id = x.seq_run_id;

-- feedback_lift_of with errors censoring, every seq@k run.
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
       exact_sum(cost_usd)                                        AS cost_usd,
       n_unpriced_calls(cost_usd, error)                          AS n_unpriced_calls
FROM current_calls
GROUP BY run_id, task_index, role, model;
