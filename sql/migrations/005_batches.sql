-- Schema 5: batch and flex prices, cache writes, and the batches a run submitted.

ALTER TABLE calls ADD COLUMN cache_write_tokens BIGINT;
ALTER TABLE calls ADD COLUMN price_tier VARCHAR;
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
