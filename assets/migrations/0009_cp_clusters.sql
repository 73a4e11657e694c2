-- Connected clusters (docs/reference-cluster.md#cluster-connect-and-disconnect): one row per organization and
-- cluster name. `cluster connect` stores the deploy service account's token here (never in a checkout);
-- `cluster disconnect` has the control plane revoke it first (token emptied, revoked_at set), then
-- deletes the row. Times are microseconds. Portable SQL for SQLite and PostgreSQL.
CREATE TABLE cp_clusters (
    org_id TEXT NOT NULL REFERENCES auth_orgs (id),
    name TEXT NOT NULL,
    context TEXT NOT NULL,
    server TEXT NOT NULL,
    ca TEXT,
    insecure BOOLEAN NOT NULL,
    auth TEXT NOT NULL,
    namespace TEXT NOT NULL,
    service_account TEXT NOT NULL,
    token TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    revoked_at BIGINT,
    PRIMARY KEY (org_id, name)
);
