-- Schema 2: re-judging runs link each slot to the answer they graded.

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
