-- Schema 3: whether a run's feedback mode shows the actor information derived from the grading
-- data; NULL for runs recorded before.

ALTER TABLE runs ADD COLUMN shows_grading_info BOOLEAN;
