-- De-duplication keys on SQLite, without a random index page per delivery (bench/webhooks.py).
-- Portable SQL; PostgreSQL keeps claiming keys in delivery_keys directly and leaves these empty.
--
-- The recorder appends each new (trigger, key) to this log (seq is SQLite's rowid: appends touch
-- only the right edge) and keeps the log in memory; a key it has not seen there is looked up in
-- delivery_keys. Once the log is long, its keys are merged into delivery_keys in sorted runs, one
-- range of key digests per batch (each run touches a contiguous part of the key index), and the
-- merged rows are deleted, all but the newest, so that seq only grows.
CREATE TABLE delivery_key_log (
    seq INTEGER PRIMARY KEY,
    trigger_id TEXT NOT NULL,
    dedupe_key TEXT NOT NULL,
    delivery_id TEXT NOT NULL
);

-- A merge in progress: log rows with seq < upto are merged range by range (next_range 0-63),
-- then deleted (next_range 64).
CREATE TABLE delivery_key_merge (
    id INTEGER PRIMARY KEY,
    upto BIGINT NOT NULL,
    next_range INTEGER NOT NULL
);
