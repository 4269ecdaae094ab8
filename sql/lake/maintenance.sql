-- DuckDB statements that only a lake understands (`seqk lake compact`, its data path, its newest
-- snapshot), run by seqk/store/lake.py on a session where the lake is attached as `lake`. Kept
-- apart from sql/*.sql, whose queries every store (a DuckDB file too) must run.

-- name: count_data_files() -> scalar
-- How many Parquet data files the lake's current snapshot reads (a cold read opens each).
SELECT count(*) FROM __ducklake_metadata_lake.ducklake_data_file WHERE end_snapshot IS NULL;

-- name: count_snapshots() -> scalar
-- How many snapshots the lake keeps (one per commit until expired).
SELECT count(*) FROM lake.snapshots();

-- name: flush_inlined() -> none
-- Writes rows DuckLake kept inline in the catalog (small commits) out to Parquet; returns nothing.
CALL ducklake_flush_inlined_data('lake');

-- name: merge_files() -> none
-- Merges adjacent small data files into larger ones; returns nothing.
CALL ducklake_merge_adjacent_files('lake');

-- name: expire_snapshots(older_than) -> none
-- Forgets snapshots older than the given time (time travel before it is lost); returns nothing.
CALL ducklake_expire_snapshots('lake', older_than => $older_than::TIMESTAMPTZ);

-- name: cleanup_files() -> none
-- Deletes the data files no kept snapshot reads any more; returns nothing.
CALL ducklake_cleanup_old_files('lake', cleanup_all => true);

-- name: get_data_path() -> scalar
-- Where the lake keeps its data files (s3://bucket/prefix/ or a folder), as it recorded at its
-- creation; NULL before that.
SELECT value FROM __ducklake_metadata_lake.ducklake_metadata WHERE key = 'data_path';

-- name: current_snapshot() -> scalar
-- The id of the lake's newest snapshot: every commit makes a new one (what the viewer polls).
SELECT id FROM ducklake_current_snapshot('lake');
