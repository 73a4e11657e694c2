"""Bearer tokens: minted with a brand prefix, stored only as sha256, compared in constant time.

Shared by trigger tokens (webhook ingestion) and login/API tokens (docs/reference-auth.md#token-kinds).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets


def new_token(prefix: str) -> str:
    return f"{prefix}_{secrets.token_urlsafe(32)}"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", errors="surrogateescape")).hexdigest()


# A fixed hash compared against when there is nothing to compare, so every path costs the same.
_DUMMY_HASH = token_hash("no such trigger")


def token_matches(presented: str | None, stored_hash: str | None) -> bool:
    """Constant-time check of a presented token against a stored hash."""
    return hash_matches(token_hash(presented) if presented else None, stored_hash)


def hash_matches(presented_hash: str | None, stored_hash: str | None) -> bool:
    """Constant-time check of a presented token's hash (token_hash) against a stored hash."""
    ok = hmac.compare_digest(presented_hash or _DUMMY_HASH, stored_hash or _DUMMY_HASH)
    return ok and bool(presented_hash) and bool(stored_hash)
