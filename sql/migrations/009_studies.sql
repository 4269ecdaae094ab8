-- Schema 8: sequential studies (seqk.run.study): a study's declaration, each task as it entered
-- its confidence sequence, and the sequence after each look.

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
