-- Schema 8: the limit on calls in flight each endpoint sustained, remembered across runs, so a
-- later run against the same (api_base, model) starts there instead of slow-starting from 4.
-- Appended at the end of each invocation that made calls (a reset appends a row whose
-- sustained is NULL); the newest row per (api_base, model) is the one that counts.

CREATE TABLE endpoint_limits (
    api_base     VARCHAR NOT NULL,
    model        VARCHAR NOT NULL,
    sustained    INTEGER,
    bounded      BOOLEAN NOT NULL,
    ceiling      INTEGER,
    rate_limited INTEGER NOT NULL,
    calls        INTEGER NOT NULL,
    run_id       VARCHAR,
    recorded_at  TIMESTAMP NOT NULL
);
