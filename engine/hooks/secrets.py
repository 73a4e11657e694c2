"""Server-side secrets (spec 1 Authentication: the token is stored hashed and displayed once).

- Trigger tokens and API tokens: only sha256(token) is stored; checks use hmac.compare_digest.
- HMAC shared secrets must stay usable for verification, so they are sealed (Fernet: AES-128-CBC
  + HMAC-SHA256) with a key kept in `<data-dir>/secret.key`, mode 0600, created once. Every server
  process sharing a database must share that key (same data dir, or PLATFORM_SECRET_KEY).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

KEY_FILE = "secret.key"


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


def _key(data_dir: Path) -> bytes:
    env = os.environ.get("PLATFORM_SECRET_KEY")
    if env:
        return env.encode()
    from cryptography.fernet import Fernet

    path = data_dir / KEY_FILE
    if not path.exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        tmp = data_dir / f".{KEY_FILE}.{os.getpid()}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(Fernet.generate_key())
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)  # atomic and exclusive: the first server process to start wins
        except FileExistsError:
            pass
        finally:
            tmp.unlink(missing_ok=True)
    return path.read_bytes().strip()


class SecretBox:
    """Seals and opens HMAC secrets with the data dir's key."""

    def __init__(self, data_dir: Path) -> None:
        from cryptography.fernet import Fernet

        self._fernet = Fernet(_key(data_dir))

    def seal(self, secret: bytes) -> str:
        return self._fernet.encrypt(secret).decode()

    def open(self, sealed: str) -> bytes:
        return self._fernet.decrypt(sealed.encode())
