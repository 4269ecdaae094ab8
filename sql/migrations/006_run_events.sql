-- Schema 6: append-only runs, so that several processes (several machines, over a lake) may
-- write one database at once. A run's row is written once (run_rows); raising k, starting a
-- new generation and marking the run updated are appended to run_events; late feedback is
-- appended to feedback_fills. The view `runs` (views.sql) resolves them.

ALTER TABLE runs RENAME TO run_rows;

CREATE TABLE run_events (
    run_id     VARCHAR NOT NULL,
    event      VARCHAR NOT NULL,
    k          INTEGER,
    generation INTEGER,
    config     JSON,
    event_at   TIMESTAMP NOT NULL
);

CREATE TABLE feedback_fills (
    attempt_uid VARCHAR NOT NULL,
    feedback    VARCHAR,
    error       JSON,
    filled_at   TIMESTAMP NOT NULL
);
