"""Server-side secrets (docs/reference-webhooks.md#secrets: the token is stored hashed and displayed once).

- Trigger tokens and API tokens: only sha256(token) is stored; checks use hmac.compare_digest
  (engine/auth/bearer.py).
- HMAC shared secrets must stay usable for verification, so they are sealed (Fernet: AES-128-CBC
  + HMAC-SHA256) with a key kept in `<data-dir>/secret.key`, mode 0600, created once. Every server
  process sharing a database must share that key (same data dir, or PLATFORM_SECRET_KEY).
"""

from __future__ import annotations

import os
from pathlib import Path

KEY_FILE = "secret.key"


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
