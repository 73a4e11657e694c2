-- Login and tokens (docs/reference-auth.md): organizations, users, one-time
-- authorization codes and every token the server issues. Portable SQL for SQLite and PostgreSQL.
-- Secrets are never stored: codes and tokens as sha256 hex digests, passwords as argon2id hashes.

-- An organization and the deploy, secret and domain permissions it grants its members' tokens
-- (space-separated, e.g. 'deploy:read deploy:write').
CREATE TABLE auth_orgs (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    permissions TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE auth_users (
    id TEXT PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    org_id TEXT NOT NULL REFERENCES auth_orgs (id),
    role TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

-- One-time codes of the authorization-code flow: bound to client, redirect URI and PKCE
-- challenge; used_at is set by the one exchange that wins (a replay finds it set).
CREATE TABLE auth_codes (
    code_hash TEXT PRIMARY KEY,
    client_id TEXT NOT NULL,
    redirect_uri TEXT NOT NULL,
    scope TEXT NOT NULL,
    user_id TEXT NOT NULL REFERENCES auth_users (id),
    code_challenge TEXT NOT NULL,
    code_challenge_method TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at BIGINT
);

-- Every token: kind 'access' (browser login), 'api' (platform auth token create),
-- 'control_plane' (platform auth framework-credential), 'automation' (organization token, no
-- user). code_hash links an access token to the code it was exchanged for (a replayed code
-- revokes it); parent_id links a minted token to the token that asked for it.
CREATE TABLE auth_tokens (
    id TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    name TEXT,
    user_id TEXT,
    org_id TEXT NOT NULL REFERENCES auth_orgs (id),
    scope TEXT NOT NULL,
    client_id TEXT,
    code_hash TEXT,
    parent_id TEXT,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    revoked_at BIGINT
);

CREATE INDEX auth_tokens_by_owner ON auth_tokens (org_id, kind, name);
CREATE INDEX auth_tokens_by_code ON auth_tokens (code_hash);
