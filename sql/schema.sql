-- The whole current schema of a seqk database. Append-only: a retried attempt
-- keeps its old error row; the views in views.sql pick what counts.
--
-- A new database is made from this file alone. A database made by an older seqk is brought
-- here by the numbered files in migrations/ (schema_info.schema_version says which it has);
-- tests/store replays every migration from 001 and checks it gives exactly this schema. A
-- change here needs a migration beside it.

CREATE TABLE IF NOT EXISTS schema_info (
    key   VARCHAR PRIMARY KEY,
    value VARCHAR NOT NULL
);

-- One row per run, written once: what the run was when it was registered. k and generation
-- change (k-extension, restart) by rows appended to run_events; the view `runs` (views.sql)
-- gives each run as it is now. Over a lake, two processes starting one run at once may both
-- register it: the view keeps the first.
CREATE TABLE IF NOT EXISTS run_rows (
    run_id             VARCHAR PRIMARY KEY,  -- <slice>/<metric>/<agent>/<verifier>/<feedback>
    benchmark          VARCHAR NOT NULL,
    slice              VARCHAR NOT NULL,
    metric             VARCHAR NOT NULL,     -- 'pass@k' | 'seq@k'
    k                  INTEGER NOT NULL,     -- at registration; run_events may raise it
    generation         INTEGER NOT NULL,     -- 1 at registration; a restart appends a larger one
    feedback_mode      VARCHAR NOT NULL,
    actor_model        VARCHAR NOT NULL,
    judge_model        VARCHAR,              -- NULL for a non-LLM verifier
    critic_model       VARCHAR,              -- NULL for a template-only feedback mode
    verifier           VARCHAR NOT NULL,     -- 'llm' | 'deterministic' | ...
    temperature        DOUBLE,
    options            JSON,
    config             JSON,                 -- the resolved variant, secrets never included
    fingerprint        VARCHAR NOT NULL,
    fingerprint_fields JSON NOT NULL,        -- field -> value, to name what differs on resume
    created_at         TIMESTAMP NOT NULL,
    updated_at         TIMESTAMP NOT NULL,
    seqk_version       VARCHAR NOT NULL,
    -- TRUE when the run's feedback mode shows the actor information derived from the grading
    -- data (its results are not comparable with blind modes); NULL for runs recorded before schema 3.
    shows_grading_info BOOLEAN,
    -- TRUE when the benchmark's own harness clips the mean score to [0, 1], not each score
    -- (HealthBench): attempts keep their unclipped scores and the run's soft score is the clipped
    -- mean. NULL (runs recorded before schema 4, imported seq_k trees) reads FALSE.
    soft_score_clipped BOOLEAN,
    -- seq@k: independent chains per task (`chains:`), raised by an extension, never lowered;
    -- 1 for pass@k and for every run recorded before schema 4.
    chains             INTEGER NOT NULL DEFAULT 1
);

-- What happened to a run after it was registered, appended (never UPDATEd, so writers on
-- several machines never conflict): 'extend' (k raised, attempts kept), 'restart' (k raised in a
-- new generation), 'touch' (the run was written to; k and generation NULL). The view `runs`
-- takes the largest k and generation (both only grow) and the latest config and time.
CREATE TABLE IF NOT EXISTS run_events (
    run_id     VARCHAR NOT NULL,
    event      VARCHAR NOT NULL,   -- 'extend' | 'restart' | 'touch'
    k          INTEGER,
    generation INTEGER,
    config     JSON,
    event_at   TIMESTAMP NOT NULL,
    chains     INTEGER             -- a 'chains' event: the run's chains raised to this
);

CREATE TABLE IF NOT EXISTS tasks (
    run_id       VARCHAR NOT NULL,
    task_index   INTEGER NOT NULL,  -- 1-based canonical index
    task_id      VARCHAR NOT NULL,
    prompt       VARCHAR NOT NULL,
    content_hash VARCHAR NOT NULL,  -- sha256 of prompt + grading data: same index, same task
    meta         JSON,
    PRIMARY KEY (run_id, task_index)
);

CREATE TABLE IF NOT EXISTS attempts (
    attempt_uid     VARCHAR PRIMARY KEY,   -- uuid4, links calls to their attempt
    run_id          VARCHAR NOT NULL,
    generation      INTEGER NOT NULL,
    task_index      INTEGER NOT NULL,
    attempt_index   INTEGER NOT NULL,      -- 1-based
    k               INTEGER NOT NULL,      -- the K this attempt's prompt was built with
    status          VARCHAR NOT NULL,      -- 'ok' | 'error'
    success         BOOLEAN,               -- NULL when the judge never ruled
    score           DOUBLE,
    prompt          VARCHAR,               -- exact text the actor saw
    output          VARCHAR,               -- exact actor reply
    raw_eval_output VARCHAR,               -- the judge's public diagnostic
    judge_details   JSON,
    feedback        VARCHAR,               -- exact text the next attempt's prompt includes
    error           JSON,                  -- {stage, type, message, status_code} when status = 'error'
    started_at      TIMESTAMP NOT NULL,
    finished_at     TIMESTAMP NOT NULL,
    chain_index     INTEGER NOT NULL DEFAULT 1  -- 1-based; a slot is (task, chain, attempt)
);

-- One row per LLM call, whatever the role. Failed calls are kept, with error set.
CREATE TABLE IF NOT EXISTS calls (
    attempt_uid     VARCHAR NOT NULL,
    run_id          VARCHAR NOT NULL,
    generation      INTEGER NOT NULL,
    task_index      INTEGER NOT NULL,
    attempt_index   INTEGER NOT NULL,
    call_index      INTEGER NOT NULL,      -- order within the attempt
    role            VARCHAR NOT NULL,      -- 'actor' | 'judge' | 'critic'
    model           VARCHAR NOT NULL,
    prompt          VARCHAR,
    output          VARCHAR,
    input_tokens    BIGINT,
    cached_tokens   BIGINT,
    thinking_tokens BIGINT,
    output_tokens   BIGINT,
    cost_usd        DOUBLE,                -- NULL when the model's price is unknown
    latency_s       DOUBLE,
    retries         INTEGER NOT NULL,      -- transient failures retried before this outcome
    error           VARCHAR,
    started_at      TIMESTAMP NOT NULL,
    cache_write_tokens BIGINT,             -- input tokens written to the provider's cache (part of input)
    price_tier      VARCHAR,               -- 'sync' | 'batch' | 'flex'; NULL before schema 5 (sync)
    chain_index     INTEGER NOT NULL DEFAULT 1  -- the chain of the call's attempt
);

-- A re-judging run (seqk rejudge) grades answers another run paid for: each of its slots
-- names the source attempt whose prompt and output it judged. The actor's calls stay with the
-- source run and are never copied, so spend is counted once.
CREATE TABLE IF NOT EXISTS rejudged_slots (
    run_id             VARCHAR NOT NULL,   -- the re-judging run
    task_index         INTEGER NOT NULL,
    attempt_index      INTEGER NOT NULL,
    source_run_id      VARCHAR NOT NULL,
    source_attempt_uid VARCHAR NOT NULL,   -- attempts.attempt_uid of the answer judged again
    PRIMARY KEY (run_id, task_index, attempt_index)
);

-- A provider batch (seqk.run.rounds): recorded with state 'submitting' before it is sent and
-- updated after, so a run killed at any point finds it again (by batch_key, which the batch's
-- metadata carries) instead of paying for it twice.
CREATE TABLE IF NOT EXISTS batches (
    batch_key     VARCHAR PRIMARY KEY,  -- seqk's idempotency key for this batch
    run_id        VARCHAR NOT NULL,
    generation    INTEGER NOT NULL,
    provider      VARCHAR NOT NULL,     -- 'openai' | 'anthropic'
    api_base      VARCHAR,
    model         VARCHAR NOT NULL,
    batch_id      VARCHAR,              -- the provider's id; NULL while 'submitting'
    role          VARCHAR NOT NULL,     -- 'actor' | 'critic'
    round         INTEGER NOT NULL,     -- seq@k: the attempt index; pass@k: 1
    n_items       INTEGER NOT NULL,
    state         VARCHAR NOT NULL,     -- 'submitting' | 'in_progress' | 'ended' | 'failed' | 'expired' | 'cancelled' | 'lost'
    n_done        INTEGER,              -- items finished, as the provider counts them
    submitted_at  TIMESTAMP NOT NULL,
    updated_at    TIMESTAMP NOT NULL,
    finished_at   TIMESTAMP
);

-- Each item of a batch and the slot it answers.
CREATE TABLE IF NOT EXISTS batch_items (
    batch_key     VARCHAR NOT NULL,
    custom_id     VARCHAR NOT NULL,     -- the item's id inside the batch
    run_id        VARCHAR NOT NULL,
    generation    INTEGER NOT NULL,
    task_index    INTEGER NOT NULL,
    chain_index   INTEGER NOT NULL,     -- 1 until a run holds several chains per task
    attempt_index INTEGER NOT NULL,
    role          VARCHAR NOT NULL,
    prompt_sha256 VARCHAR NOT NULL,     -- the result is used only for this exact prompt
    PRIMARY KEY (batch_key, custom_id)
);

-- Late feedback: a valid failed seq@k attempt whose critic failed gets its feedback (or the
-- critic's new failure) when a later run asks the critic again. Appended, never UPDATEd into
-- attempts; the view attempts_filled applies the latest fill of each attempt.
CREATE TABLE IF NOT EXISTS feedback_fills (
    attempt_uid VARCHAR NOT NULL,
    feedback    VARCHAR,
    error       JSON,
    filled_at   TIMESTAMP NOT NULL
);

-- The limit on calls in flight an endpoint sustained (seqk.run.limits), remembered so a later
-- run against the same (api_base, model) starts there instead of slow-starting from 4. Appended
-- at the end of each invocation that made calls; the newest row per (api_base, model) counts.
CREATE TABLE IF NOT EXISTS endpoint_limits (
    api_base     VARCHAR NOT NULL,   -- scheme://host:port/path, never a user, password or query; '' for a provider's own endpoint
    model        VARCHAR NOT NULL,
    sustained    INTEGER,            -- calls in flight at which a call succeeded since the last 429; NULL: forgotten (seqk limits --reset)
    bounded      BOOLEAN NOT NULL,   -- TRUE when a 429 bounded it: a later run probes past it additively
    ceiling      INTEGER,            -- the most the run allowed (max_concurrency or its default)
    rate_limited INTEGER NOT NULL,   -- calls answered 429 in that invocation
    calls        INTEGER NOT NULL,   -- calls that succeeded in that invocation
    run_id       VARCHAR,            -- the run that measured it; NULL for a reset
    recorded_at  TIMESTAMP NOT NULL
);

-- A sequential study (seqk.run.study): two ordinary runs, the seq@k arm and its partner, run
-- a window of tasks at a time in a seeded order until an anytime-valid confidence sequence for
-- their paired difference decides. Written once, when the study starts: its declaration.
CREATE TABLE IF NOT EXISTS studies (
    study_id            VARCHAR PRIMARY KEY,  -- sha256 prefix of the declaration (arms, question, alpha, margin, seed, budget per task)
    seq_run_id          VARCHAR NOT NULL,
    partner_run_id      VARCHAR NOT NULL,
    question            VARCHAR NOT NULL,     -- 'lift' | 'equal_budget'
    alpha               DOUBLE NOT NULL,
    margin              DOUBLE NOT NULL,      -- 0: no "no practical difference" stop
    budget_usd          DOUBLE,               -- the cap over both arms when the study started (raised later: study_updates)
    budget_usd_per_task DOUBLE,               -- equal_budget: the budget per task the cells are chosen at
    order_seed          BIGINT NOT NULL,
    task_order          JSON NOT NULL,        -- the task indices in the order they run
    declaration         JSON NOT NULL,        -- the study file as resolved (paths, keys)
    seqk_version        VARCHAR NOT NULL,
    created_at          TIMESTAMP NOT NULL
);

-- Each task as it entered the sequence, in order (position 1, 2, ...): its value in each arm at
-- the study's cell, as a range [low, high] (equal unless an error left it censored), and what
-- each arm spent on it. Frozen at entry: the sequence is recomputed from these rows alone.
CREATE TABLE IF NOT EXISTS study_tasks (
    study_id         VARCHAR NOT NULL,
    position         INTEGER NOT NULL,        -- 1-based place in the study's task order
    task_index       INTEGER NOT NULL,
    seq_low          DOUBLE NOT NULL,
    seq_high         DOUBLE NOT NULL,
    partner_low      DOUBLE NOT NULL,
    partner_high     DOUBLE NOT NULL,
    seq_cost_usd     DOUBLE,                  -- NULL when none of its calls was priced
    partner_cost_usd DOUBLE,
    entered_at       TIMESTAMP NOT NULL,
    PRIMARY KEY (study_id, position)
);

-- The sequence after each look (a window of tasks entered, or a stop): what progress and the
-- report show, and why the study stopped (stop_reason, on its last row).
CREATE TABLE IF NOT EXISTS study_updates (
    study_id      VARCHAR NOT NULL,
    update_index  INTEGER NOT NULL,           -- 1, 2, ...
    n_tasks       INTEGER NOT NULL,           -- tasks in the sequence
    n_used        INTEGER NOT NULL,           -- tasks the study has run (a pilot and tasks not entered yet included)
    n_ranged      INTEGER NOT NULL,           -- of which entered as a range (an error censored them)
    estimate      DOUBLE,                     -- mean paired difference (of the ranges' midpoints)
    low           DOUBLE NOT NULL,
    high          DOUBLE NOT NULL,
    decision      VARCHAR NOT NULL,           -- 'seq_better' | 'partner_better' | 'no_practical_difference' | 'undecided'
    stop_reason   VARCHAR,                    -- NULL while it goes on; 'decided' | 'tasks_exhausted' | 'budget' | 'error_share' | 'no_cell'
    spent_usd     DOUBLE,                     -- both arms, on the tasks the study ran
    full_cost_usd DOUBLE,                     -- both arms on every available task, at the per-task spend so far
    budget_usd    DOUBLE,                     -- the cap in force at this look
    cells         JSON,                       -- the cell each arm is compared at: {seq: [width, depth], partner: [width, depth]}
    updated_at    TIMESTAMP NOT NULL,
    PRIMARY KEY (study_id, update_index)
);

-- Each chain's outcome so far, kept as its attempts are written: one row per (run, generation,
-- task, chain) with at least one attempt, replaced (in the same transaction) whenever an attempt
-- or call of that chain is written (seqk.store.writes.append_attempts: the writer, rejudge,
-- import), and rebuilt from attempts by a migration. What of it depends on the run as it is now
-- (its k, metric, current generation) is applied when it is read (views.sql chain_outcomes_of),
-- so a k-extension or a restart changes no row. The slots are the ones current_attempts_of
-- counts (a valid row, else the latest error); the columns are chain_facts_of's counts and
-- prefixes and chain_outcomes_of's spend, defined once in views.sql chain_kept_rows.
CREATE TABLE IF NOT EXISTS chain_kept (
    run_id           VARCHAR NOT NULL,
    generation       INTEGER NOT NULL,
    task_index       INTEGER NOT NULL,
    chain_index      INTEGER NOT NULL,
    n_attempts       BIGINT NOT NULL,    -- slots with a row that counts
    n_valid          BIGINT NOT NULL,
    n_error          BIGINT NOT NULL,    -- slots holding only errors
    n_success        BIGINT NOT NULL,
    first_success    INTEGER,            -- attempt index of the first valid success
    first_error      INTEGER,            -- attempt index of the first error-only slot
    valid_prefix     BIGINT NOT NULL,    -- slots 1..n all valid
    settled_prefix   BIGINT NOT NULL,    -- slots 1..n all present (valid or error)
    ended_in_error   BOOLEAN NOT NULL,   -- the highest slot holds only errors
    last_finished_at TIMESTAMP NOT NULL, -- the chain's latest attempt row, superseded errors included
    cost_usd         DOUBLE[] NOT NULL,  -- per slot 1..valid_prefix, every call of the slot; NULL: none priced
    tokens           BIGINT[] NOT NULL,  -- per slot 1..valid_prefix, input + output tokens
    valid_cost_usd   DOUBLE NOT NULL,    -- summed over every valid slot
    valid_tokens     BIGINT NOT NULL,
    priced           BOOLEAN NOT NULL,   -- any call of the chain was priced
    -- every call of the chain, whatever its slot's fate (what `seqk status` says was paid)
    input_tokens     BIGINT,
    output_tokens    BIGINT,
    spent_usd        DOUBLE,             -- NULL when no call of the chain was priced
    n_unpriced_calls BIGINT NOT NULL,    -- calls that returned with no price (n_unpriced_calls)
    n_failed_calls   BIGINT NOT NULL,    -- calls that failed (error IS NOT NULL)
    -- each attempt index i with a call, in order, whatever its slot's fate (errored, past a hole,
    -- not written yet): the cost of its calls (NULL: none priced) and their input + output tokens
    spend_by_slot    STRUCT(i INTEGER, cost_usd DOUBLE, tokens BIGINT)[] NOT NULL,
    -- each slot (attempt_index i, in order) with its best-so-far score b: the most of the valid
    -- scores (or successes as 1.0) at slots up to it, 0.0 before any (the soft score's spans)
    slot_best        STRUCT(i INTEGER, b DOUBLE)[] NOT NULL,
    PRIMARY KEY (run_id, generation, task_index, chain_index)
);
