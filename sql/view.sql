-- The web viewer's reads (seqk/view/pages.py). Each page is one or two of these, so a page
-- over a million attempts reads them once.

-- name: view_runs(run_ids) -> rows
-- One row per run of $run_ids (NULL: every run), for the run list and a run page's header:
-- settings; its progress as run_progress_of has it (n_tasks registered, n_started, n_finished,
-- n_passed, valid and errored attempts: what `seqk status` shows); tokens, cost_usd (NULL
-- when no call was priced), unpriced and failed calls; pass_run_id (the pass@k run a seq@k
-- run is compared with, run_pairs choice 1); curve: [{t, n_tasks, value, low, high}] as in
-- run_curve (errors censor a chain; the 95% Wilson interval where no chain is censored before t,
-- else NULL; n_left_out: pass@k tasks with fewer than t valid samples). Everything is read from
-- the kept chains (chain_kept: one row per chain, never the attempts or the calls), read once and
-- counted by state (chain_tally_of): their outcomes and spend; without run_curve's soft score. The spend at each point of
-- the curve is frontier_of's (the run list's equal-budget chart reads it there; a column of it
-- here, which nothing read, was 70 % of this query at 10 M attempts: docs/performance.md).
-- chain_tally_of's rows (a few hundred a run of one chain a task; a row a chain in a run with
-- `chains:`) give the curve, the progress and the spend.
WITH tally AS MATERIALIZED (
    SELECT * FROM chain_tally_of(run_ids := $run_ids::VARCHAR[])
),
-- the runs view ranks run_rows and reads run_events: once for the whole query
chosen AS MATERIALIZED (
    SELECT * FROM runs
    WHERE $run_ids::VARCHAR[] IS NULL OR list_contains($run_ids::VARCHAR[], run_id)
),
-- The curve as run_curve_of has it: errors censor a chain (Kaplan-Meier over the run's chains, a
-- task valued at the mean of its chains' Efron values); pass@t by Chen over the valid samples.
-- Chains with the same counts are counted once (a few hundred states a run): the hazards and the
-- one-chain runs' curves read from these (a run with `chains:` values its tasks from the tally's
-- rows, a row a chain).
states AS MATERIALIZED (
    SELECT run_id, metric, k, chains, n_samples, n_success, event, censored, sum(n) AS n
    FROM tally GROUP BY ALL
),
progress AS (
    SELECT * FROM run_progress_from('tally', run_ids := $run_ids::VARCHAR[])
),
hazards AS (
    SELECT run_id, j,
           product(1.0 - CASE WHEN at_risk > 0 THEN events / at_risk ELSE 0.0 END)
               OVER (PARTITION BY run_id ORDER BY j) AS survival
    -- chains counted per (exit, event) first: the range over attempt indices then spans a few
    -- rows a run, not every chain
    FROM (SELECT e.run_id, g.j::INTEGER AS j,
                 coalesce(sum(e.n) FILTER (WHERE g.j <= e.exit), 0)::BIGINT AS at_risk,
                 coalesce(sum(e.n) FILTER (WHERE e.event = g.j), 0)::BIGINT AS events
          FROM (SELECT run_id, k, event, coalesce(event, censored, k) AS exit, sum(n) AS n
                FROM states WHERE metric = 'seq@k' GROUP BY ALL) e,
               range(1, e.k + 1) AS g(j)
          GROUP BY e.run_id, g.j)
),
points AS (
    -- tasks (one-chain runs) with the same counts have the same curve: computed once, weighted by n
    SELECT g.run_id, t.t::INTEGER AS t, g.n,
           CASE WHEN g.metric = 'pass@k' THEN pass_at_t_unbiased(g.n_samples, g.n_success, t.t)
                ELSE efron_value(g.event, g.censored, t.t, st.survival, coalesce(sc.survival, 1.0))
                END AS value,
           coalesce(g.censored < t.t, false) AS is_censored
    FROM (SELECT * FROM states WHERE metric = 'pass@k' OR chains = 1) g
    CROSS JOIN LATERAL range(1, g.k + 1) AS t(t)
    LEFT JOIN hazards st ON st.run_id = g.run_id AND st.j = t.t
    LEFT JOIN hazards sc ON sc.run_id = g.run_id AND sc.j = g.censored
    UNION ALL
    -- several chains: a task's value is the mean of its chains'
    SELECT s.run_id, t.t::INTEGER, 1,
           exact_avg(efron_value(s.event, s.censored, t.t, st.survival, coalesce(sc.survival, 1.0))),
           bool_or(coalesce(s.censored < t.t, false))
    FROM (SELECT * FROM tally WHERE metric = 'seq@k' AND chains > 1) s
    CROSS JOIN LATERAL range(1, s.k + 1) AS t(t)
    JOIN hazards st ON st.run_id = s.run_id AND st.j = t.t
    LEFT JOIN hazards sc ON sc.run_id = s.run_id AND sc.j = s.censored
    GROUP BY s.run_id, s.task_index, t.t
),
curve AS (
    SELECT run_id, t,
           coalesce(sum(n) FILTER (WHERE value IS NOT NULL), 0)::BIGINT AS n_tasks,
           coalesce(sum(n) FILTER (WHERE value IS NULL), 0)::BIGINT     AS n_left_out,
           coalesce(sum(n) FILTER (WHERE is_censored), 0)::BIGINT       AS n_censored,
           exact_sum(n * value) AS x
    FROM points GROUP BY run_id, t
),
curves AS (
    SELECT run_id,
           list({'t': t, 'n_tasks': n_tasks, 'n_left_out': n_left_out, 'value': x / nullif(n_tasks, 0),
                 'low': CASE WHEN n_censored = 0 THEN wilson_low(x, n_tasks) END,
                 'high': CASE WHEN n_censored = 0 THEN wilson_high(x, n_tasks) END} ORDER BY t) AS curve
    FROM curve GROUP BY run_id
),
-- The run's spend, every call of its kept chains; no row for a run without a call (each call is
-- failed, priced or unpriced), whose pass@k budget has no tokens either.
spend AS (
    SELECT run_id,
           coalesce(sum(input_tokens), 0)::BIGINT AS input_tokens,
           coalesce(sum(output_tokens), 0)::BIGINT AS output_tokens,
           exact_total(spent_usd) AS cost_usd,
           bool_or(priced) AS priced,
           sum(n_unpriced_calls)::BIGINT AS n_unpriced_calls,
           sum(n_failed_calls)::BIGINT AS n_failed_calls
    FROM tally
    GROUP BY run_id
    HAVING bool_or(priced OR n_unpriced_calls > 0 OR n_failed_calls > 0)
)
SELECT r.run_id, r.benchmark, r.slice, r.metric, r.k, r.actor_model, r.judge_model,
       r.critic_model, r.verifier, r.feedback_mode, r.shows_grading_info, r.temperature,
       coalesce(p.n_tasks, 0)             AS n_tasks,
       coalesce(p.n_started, 0)           AS n_started,
       coalesce(p.n_finished, 0)          AS n_finished,
       coalesce(p.n_passed, 0)            AS n_passed,
       coalesce(p.n_valid_attempts, 0)    AS n_valid_attempts,
       coalesce(p.n_error_attempts, 0)    AS n_error_attempts,
       coalesce(s.input_tokens, 0)        AS input_tokens,
       coalesce(s.output_tokens, 0)       AS output_tokens,
       s.cost_usd,
       coalesce(s.n_unpriced_calls, 0)    AS n_unpriced_calls,
       coalesce(s.n_failed_calls, 0)      AS n_failed_calls,
       x.pass_run_id,
       coalesce(c.curve, [])              AS curve
FROM chosen r
LEFT JOIN progress p USING (run_id)
LEFT JOIN spend s USING (run_id)
LEFT JOIN curves c USING (run_id)
LEFT JOIN run_pairs x ON x.seq_run_id = r.run_id AND x.choice = 1
WHERE $run_ids::VARCHAR[] IS NULL OR list_contains($run_ids::VARCHAR[], r.run_id)
ORDER BY r.run_id;

-- name: view_runs_now(run_ids) -> rows
-- The two columns of view_runs that its run's kept chains and runs row do not settle, for the
-- runs of $run_ids (NULL: every run), in run_id order: n_tasks (the tasks registered, as
-- run_progress_of counts them) and pass_run_id (run_pairs choice 1, which another run can change).
-- The run list reads every other column of a run unchanged since (its run_fingerprints row the
-- same) from the figure cache (seqk/view/pages.py).
WITH registered AS (
    SELECT run_id, count(*) AS n_tasks FROM tasks
    WHERE $run_ids::VARCHAR[] IS NULL OR list_contains($run_ids::VARCHAR[], run_id)
    GROUP BY run_id
)
SELECT r.run_id, coalesce(g.n_tasks, 0) AS n_tasks, x.pass_run_id
FROM runs r
LEFT JOIN registered g USING (run_id)
LEFT JOIN run_pairs x ON x.seq_run_id = r.run_id AND x.choice = 1
WHERE $run_ids::VARCHAR[] IS NULL OR list_contains($run_ids::VARCHAR[], r.run_id)
ORDER BY r.run_id;

-- name: view_partners(run_id) -> rows
-- The runs a run is compared with: for a seq@k run its chosen pass@k run; for a pass@k run
-- every seq@k run that chose it, the one with its feedback mode first. (seq_run_id,
-- pass_run_id, same_feedback_mode).
SELECT x.seq_run_id, x.pass_run_id, s.feedback_mode = p.feedback_mode AS same_feedback_mode
FROM run_pairs x
JOIN runs s ON s.run_id = x.seq_run_id
JOIN runs p ON p.run_id = x.pass_run_id
WHERE x.choice = 1 AND (x.seq_run_id = $run_id OR x.pass_run_id = $run_id)
ORDER BY same_feedback_mode DESC, x.seq_run_id;

-- name: view_run_tasks(filter, search, upto, run_id, seq_run_id, pass_run_id, limit, offset) -> rows
-- One page of a run's tasks for its task table, in task order: task_index, task_id; cells:
-- [{i, status, success}] the slot that counts at each attempt index; first_success; n_error
-- (errored slots); seq_at_k and pass_at_k: the seq@k run's and the pass@k run's value at K
-- (task_curve's; NULL when left out or when the task is not shared with the same content);
-- cost_usd (NULL when nothing priced), tokens (input + output), n_failed_calls; n_matching:
-- how many tasks pass the filter and the search, on every row. $filter: all | feedback_only
-- (seq@K solved, pass@K not) | resample_only (the reverse) | never (neither run solved it) |
-- errored (an errored slot in this run); $search ('' for none) matches the task prompt or an
-- attempt's output of this run, case-insensitively; $upto (NULL for none) keeps tasks 1..upto.
-- The filters need every task's outcome (the runs' kept chains); the spend is the page's tasks'
-- kept chains' (chain_kept: every call of the chain), and the cells and the search read the attempts
-- (the cells for the page's tasks only).
WITH o AS MATERIALIZED (
    SELECT run_id, task_index, metric, k, n_samples, n_success, first_success, known_to, n_error
    FROM task_outcomes_fast_of(run_ids := [$run_id::VARCHAR, $seq_run_id::VARCHAR,
                                           $pass_run_id::VARCHAR])
),
-- task_points_of's at_k: the mean over a task's chains
points AS (
    SELECT p.run_id, p.task_index, p.at_k, t.content_hash
    FROM (SELECT run_id, task_index,
                 exact_avg(metric_outcome(metric, n_samples, n_success, first_success, known_to, k))
                     AS at_k
          FROM o WHERE run_id IN ($seq_run_id, $pass_run_id) GROUP BY run_id, task_index) p
    JOIN tasks t USING (run_id, task_index)
),
own AS (
    SELECT task_index, min(first_success) AS first_success, sum(n_error)::BIGINT AS n_error
    FROM o WHERE run_id = $run_id GROUP BY task_index
),
found AS (
    SELECT DISTINCT task_index FROM attempts
    WHERE $search <> '' AND run_id = $run_id AND contains(lower(output), lower($search))
),
rows AS (
    SELECT t.task_index, t.task_id, w.first_success, coalesce(w.n_error, 0) AS n_error,
           CASE WHEN ps.content_hash = pp.content_hash THEN ps.at_k END AS seq_at_k,
           CASE WHEN ps.content_hash = pp.content_hash THEN pp.at_k END AS pass_at_k,
           t.prompt
    FROM tasks t
    LEFT JOIN own w USING (task_index)
    LEFT JOIN points ps ON ps.run_id = $seq_run_id AND ps.task_index = t.task_index
    LEFT JOIN points pp ON pp.run_id = $pass_run_id AND pp.task_index = t.task_index
    WHERE t.run_id = $run_id AND ($upto::INTEGER IS NULL OR t.task_index <= $upto::INTEGER)
),
page AS MATERIALIZED (
    SELECT task_index, task_id, first_success, n_error, seq_at_k, pass_at_k,
           count(*) OVER () AS n_matching
    FROM rows
    WHERE CASE $filter
              WHEN 'feedback_only' THEN seq_at_k = 1 AND pass_at_k = 0
              WHEN 'resample_only' THEN seq_at_k = 0 AND pass_at_k > 0
              WHEN 'never' THEN first_success IS NULL AND coalesce(seq_at_k, 0) = 0
                                AND coalesce(pass_at_k, 0) = 0
              WHEN 'errored' THEN n_error > 0
              ELSE true END
      AND ($search = '' OR contains(lower(prompt), lower($search))
           OR task_index IN (SELECT task_index FROM found))
    ORDER BY task_index
    LIMIT $limit OFFSET $offset
),
-- the slot that counts (as in current_attempts_of): its valid row, else its latest error
slots AS (
    SELECT a.task_index, a.chain_index, a.attempt_index, a.status, a.success
    FROM attempts a
    JOIN runs r ON r.run_id = a.run_id AND r.generation = a.generation
    WHERE a.run_id = $run_id AND a.task_index IN (SELECT task_index FROM page)
    QUALIFY row_number() OVER (PARTITION BY a.task_index, a.chain_index, a.attempt_index
                               ORDER BY a.status = 'ok' DESC, a.finished_at DESC,
                                        a.attempt_uid DESC) = 1
),
cells AS (
    SELECT task_index,
           -- by attempt index, then chain: the same order at every read
           list({'i': attempt_index, 'status': status, 'success': success}
                ORDER BY attempt_index, chain_index) AS cells
    FROM slots GROUP BY task_index
),
spend AS (
    SELECT task_index, exact_sum(spent_usd) AS cost_usd,
           sum(coalesce(input_tokens, 0) + coalesce(output_tokens, 0))::BIGINT AS tokens,
           sum(n_failed_calls)::BIGINT AS n_failed_calls
    FROM chain_kept_current_of(run_ids := [$run_id::VARCHAR])
    WHERE task_index IN (SELECT task_index FROM page)
    GROUP BY task_index
)
SELECT p.task_index, p.task_id, coalesce(c.cells, []) AS cells, p.first_success, p.n_error,
       p.seq_at_k, p.pass_at_k, sp.cost_usd, coalesce(sp.tokens, 0) AS tokens,
       coalesce(sp.n_failed_calls, 0) AS n_failed_calls, p.n_matching
FROM page p
LEFT JOIN cells c USING (task_index)
LEFT JOIN spend sp USING (task_index)
ORDER BY p.task_index;
