-- How far the delivery journal is indexed (docs/reference-webhooks.md#durability-and-processes): on
-- SQLite the recorder's commit point is an append-only journal in the data dir (journal/), and
-- its records are copied into deliveries, run_queue and delivery_keys behind the 202s. The
-- position of the first record not yet copied (segment number, byte offset) moves in the same
-- transaction as the rows it covers, so a record is never copied twice. One row (id 1).
-- Numbered 0010 so a sibling branch's 0007 can merge beside it.
CREATE TABLE delivery_journal (
    id INTEGER PRIMARY KEY,
    segment BIGINT NOT NULL,
    position BIGINT NOT NULL
);
