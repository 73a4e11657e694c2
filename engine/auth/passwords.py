"""Passwords: argon2id (argon2-cffi's RFC 9106 low-memory profile), verified in constant time.

An unknown user is checked against a fixed dummy hash, so a sign-in costs the same whether or not
the account exists (no user enumeration by timing)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def _hasher() -> Any:
    from argon2 import PasswordHasher
    from argon2.profiles import RFC_9106_LOW_MEMORY

    return PasswordHasher.from_parameters(RFC_9106_LOW_MEMORY)


@lru_cache(maxsize=1)
def _dummy() -> str:
    return str(_hasher().hash("not a password of anyone"))


def hash_password(password: str) -> str:
    return str(_hasher().hash(password))


def verify_password(stored_hash: str | None, password: str) -> bool:
    from argon2.exceptions import InvalidHashError, VerificationError

    try:
        ok = bool(_hasher().verify(stored_hash or _dummy(), password))
    except (VerificationError, InvalidHashError):
        return False
    return ok and stored_hash is not None
