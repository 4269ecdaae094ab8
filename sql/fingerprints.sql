-- What the viewer keys the figures it keeps on (seqk.view.verdict_cache): a cheap hash of what
-- a run's figures are computed from, which changes whenever the run is written to.

-- name: run_fingerprints(run_ids) -> rows
-- One row per run of $run_ids (NULL: every run; run_id order): run_id, n_chains (its chain_kept rows, every generation) and
-- fingerprint, a hash of its runs row (settings, config, k, generation, chains, last event) and of
-- every column of each of its chain_kept rows (kept as each attempt or call is written): a new
-- attempt, a retried error, a late call, an extension or a restart changes it; nothing else does.
-- The lists cost_usd, tokens and slot_best are left out of the hash (hashing them was 60% of its
-- time at 10 M attempts): cost_usd and tokens are spend_by_slot's entries of the valid slots,
-- slot_best each slot's running best score, and a slot only ever appears (n_attempts) or turns
-- valid (n_valid), so a write that changes them changes a column hashed.
WITH kept AS (
    SELECT run_id, count(*) AS n_chains, bit_xor(hash(c)) AS chains_hash
    FROM (SELECT * EXCLUDE (cost_usd, tokens, slot_best) FROM chain_kept
          WHERE $run_ids::VARCHAR[] IS NULL OR list_contains($run_ids::VARCHAR[], run_id)) c
    GROUP BY run_id
)
SELECT r.run_id, coalesce(k.n_chains, 0)::BIGINT AS n_chains,
       hash(hash(r), coalesce(k.n_chains, 0), coalesce(k.chains_hash, 0)) AS fingerprint
FROM runs r
LEFT JOIN kept k USING (run_id)
WHERE $run_ids::VARCHAR[] IS NULL OR list_contains($run_ids::VARCHAR[], r.run_id)
ORDER BY r.run_id;
