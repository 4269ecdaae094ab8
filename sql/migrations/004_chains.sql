-- Schema 4: chains. A seq@k run may run n independent chains per task (`chains: n`); each
-- attempt and call names its chain (1-based), and the run keeps how many chains it asks for.
-- Every attempt recorded before is chain 1 of a one-chain run. IF NOT EXISTS: a database whose
-- schema_version lags its tables (a hand-edited one) still migrates.

ALTER TABLE runs ADD COLUMN IF NOT EXISTS chains INTEGER DEFAULT 1;
ALTER TABLE runs ALTER COLUMN chains SET NOT NULL;
ALTER TABLE attempts ADD COLUMN IF NOT EXISTS chain_index INTEGER DEFAULT 1;
ALTER TABLE attempts ALTER COLUMN chain_index SET NOT NULL;
ALTER TABLE calls ADD COLUMN IF NOT EXISTS chain_index INTEGER DEFAULT 1;
ALTER TABLE calls ALTER COLUMN chain_index SET NOT NULL;
