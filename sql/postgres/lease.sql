-- Queries seqk runs on a lake's PostgreSQL catalog itself (through psycopg, not DuckDB): the
-- run lease and the one-at-a-time set-up of a new lake. Session-level advisory locks, so that
-- PostgreSQL releases them when the holding process dies or its connection drops.

-- name: try_lease_tasks(keys) -> scalar
-- How many of the given 64-bit lock keys (one per task of a run) this session could NOT take;
-- 0 means it now holds them all.
SELECT count(*) FILTER (WHERE NOT pg_try_advisory_lock(key))
FROM unnest($keys::bigint[]) AS t(key);

-- name: release_all() -> none
-- Drops every advisory lock this session holds, shared or not; returns nothing.
SELECT pg_advisory_unlock_all();

-- name: lock_setup(key) -> none
-- Waits for the lake's set-up lock (held while a process creates the lake's tables); returns nothing.
SELECT pg_advisory_lock($key);

-- name: lock_setup_shared(key) -> none
-- Waits until no process is setting the lake up, and keeps any from starting until released (a
-- reader opening the lake, which must see it whole or not at all); returns nothing.
SELECT pg_advisory_lock_shared($key);
