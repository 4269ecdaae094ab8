-- Schema 11: chain_kept also keeps each chain's failed calls and its spend at every attempt index
-- with a call (issue 30), so that the viewer's run list and run page read chain_kept, not calls.
-- Its rows are derived data: the table is made anew here, and every chain kept afresh from the
-- attempts and calls right after this step, once views.sql's chain_kept_rows has the new columns
-- (seqk/store/schema.py).

DROP TABLE chain_kept;

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
