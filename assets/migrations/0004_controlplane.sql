-- The control plane (docs/reference-hosted.md): releases and their file artifacts,
-- hosted environments, their promotion ledger (the same rules as the machine ledger:
-- engine/promotions/rules.py) and each organization's billing entitlement.
-- Portable SQL for SQLite and PostgreSQL. Every row belongs to one organization; every read filters
-- on it. Ledger times are seconds (DOUBLE PRECISION, as the machine ledger); others microseconds.

-- Billing entitlement: a hosted deploy of an organization without it is recorded and queued (exit 7).
CREATE TABLE cp_billing (
    org_id TEXT PRIMARY KEY REFERENCES auth_orgs (id),
    enabled BOOLEAN NOT NULL,
    updated_at BIGINT NOT NULL
);

-- File artifacts, content-addressed per organization (base64 text: portable, small files).
CREATE TABLE cp_blobs (
    org_id TEXT NOT NULL REFERENCES auth_orgs (id),
    digest TEXT NOT NULL,
    size BIGINT NOT NULL,
    content TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (org_id, digest)
);

-- Releases: immutable; the same version over different artifacts is refused (fingerprint differs).
CREATE TABLE cp_releases (
    org_id TEXT NOT NULL REFERENCES auth_orgs (id),
    version TEXT NOT NULL,
    project TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    document TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (org_id, version)
);

-- A hosted environment: created by its first deploy; `env delete` removes the row (and its
-- deployments), so a later deploy of the same name creates a new environment (a new id).
-- `converged_id` is the promotion its workloads run; the lease names the server process
-- converging it (several servers on one PostgreSQL converge each environment once).
CREATE TABLE cp_envs (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES auth_orgs (id),
    name TEXT NOT NULL,
    state TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    converged_id TEXT,
    stopped_targets TEXT NOT NULL,
    lease_owner TEXT,
    lease_until BIGINT,
    UNIQUE (org_id, name)
);

CREATE TABLE cp_promotions (
    id TEXT PRIMARY KEY,
    env_id TEXT NOT NULL,
    org_id TEXT NOT NULL REFERENCES auth_orgs (id),
    seq BIGINT NOT NULL,
    env TEXT NOT NULL,
    release TEXT NOT NULL,
    images TEXT NOT NULL,
    bundle TEXT NOT NULL,
    direction TEXT NOT NULL,
    previous_id TEXT,
    plan_digest TEXT,
    supersede BOOLEAN NOT NULL,
    source TEXT NOT NULL,
    who TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    run_id TEXT,
    UNIQUE (env_id, seq)
);

CREATE TABLE cp_current (
    env_id TEXT PRIMARY KEY,
    promotion_id TEXT NOT NULL
);

CREATE TABLE cp_applies (
    env_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    promotion_id TEXT,
    release TEXT NOT NULL,
    owner TEXT,
    started_at DOUBLE PRECISION NOT NULL,
    finished_at DOUBLE PRECISION,
    phase TEXT NOT NULL,
    outcome TEXT,
    resources TEXT NOT NULL,
    superseded BOOLEAN NOT NULL,
    PRIMARY KEY (env_id, seq)
);

CREATE TABLE cp_gates (
    env_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    promotion_id TEXT NOT NULL,
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    summary TEXT NOT NULL,
    run_id TEXT NOT NULL,
    at_promote BOOLEAN NOT NULL,
    recorded_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (env_id, seq),
    UNIQUE (promotion_id, name, run_id)
);
