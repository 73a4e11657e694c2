-- When the recorder decided each delivery's answer (docs/reference-webhooks.md#trigger-stats): the
-- clock read once per batch, after its statements and before its group commit, in microseconds since
-- the Unix epoch. decided_at - received_at is the answer latency `platform trigger stats` reports.
-- Deliveries recorded before this column (and replays, answered by the API) leave it NULL.
-- Numbered 0008 so a sibling branch's 0007 can merge beside it.
ALTER TABLE deliveries ADD COLUMN decided_at BIGINT;
