-- Schema 7: chains. A seq@k run may run n independent chains per task (`chains: n`); each
-- attempt and call names its chain (1-based), and the run keeps how many chains it asks for
-- (raised by a 'chains' run event). Every attempt recorded before is chain 1 of a one-chain run.

ALTER TABLE run_rows ADD COLUMN chains INTEGER DEFAULT 1;
ALTER TABLE run_rows ALTER COLUMN chains SET NOT NULL;
ALTER TABLE run_events ADD COLUMN chains INTEGER;
ALTER TABLE attempts ADD COLUMN chain_index INTEGER DEFAULT 1;
ALTER TABLE attempts ALTER COLUMN chain_index SET NOT NULL;
ALTER TABLE calls ADD COLUMN chain_index INTEGER DEFAULT 1;
ALTER TABLE calls ALTER COLUMN chain_index SET NOT NULL;
