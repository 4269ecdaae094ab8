-- Schema 4: whether the benchmark's harness clips the run's mean score to [0, 1] rather than
-- each score (HealthBench); NULL for runs recorded before, read as FALSE.

ALTER TABLE runs ADD COLUMN soft_score_clipped BOOLEAN;
