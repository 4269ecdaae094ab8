-- name: get_schema_info() -> tuples
-- (key, value) pairs of schema_info: schema_version and views_sha256. Fails when the table is missing.
SELECT key, value FROM schema_info;

-- name: set_schema_info(key, value) -> none
-- Records one schema_info entry; returns nothing.
INSERT OR REPLACE INTO schema_info VALUES ($key, $value);

-- name: count_tables(table_name) -> scalar
-- How many tables of that name the database has (0 or 1).
SELECT count(*) FROM information_schema.tables WHERE table_name = $table_name;

-- name: add_schema_info(key, value) -> none
-- Appends one schema_info entry where there is no primary key to replace on (a lake, written
-- once when it is created); returns nothing.
INSERT INTO schema_info VALUES ($key, $value);
