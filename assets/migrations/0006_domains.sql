-- Domains on the control plane (docs/reference-domains.md: the domain record, binding and states).
-- A hostname is claimed per organization (not per environment): several organizations may claim
-- the same name (claiming does not lock it); the first to prove ownership by DNS takes it
-- (cp_domain_owners: one row per hostname, its primary key decides the race) and the others move
-- to `conflict`. Times are microseconds. Portable SQL for SQLite and PostgreSQL.
CREATE TABLE cp_domains (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES auth_orgs (id),
    hostname TEXT NOT NULL,
    token TEXT NOT NULL,
    state TEXT NOT NULL,
    env TEXT,
    target TEXT,
    redirect_to TEXT,
    created_at BIGINT NOT NULL,
    verified_at BIGINT,
    checked_at BIGINT,
    check_result TEXT,
    UNIQUE (org_id, hostname)
);

CREATE TABLE cp_domain_owners (
    hostname TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES auth_orgs (id),
    domain_id TEXT NOT NULL,
    since BIGINT NOT NULL
);
