"""HMAC of the raw body under the configured header, algorithm, prefix and encoding (a
way in of webhook ingestion). Every comparison is constant-time; any malformed value is simply "invalid"."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac

from engine.hooks.models import HmacConfig

DIGESTS = {"sha1": hashlib.sha1, "sha256": hashlib.sha256, "sha512": hashlib.sha512}


def sign(secret: bytes, body: bytes, config: HmacConfig) -> str:
    """The header value a sender would compute (used by tests and documentation examples)."""
    digest = hmac.new(secret, body, DIGESTS[config.algorithm]).digest()
    encoded = digest.hex() if config.encoding == "hex" else base64.b64encode(digest).decode()
    return config.prefix + encoded


def _decode(value: str, encoding: str) -> bytes | None:
    try:
        if encoding == "hex":
            return bytes.fromhex(value)  # accepts upper- and lowercase hex
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (ValueError, binascii.Error, UnicodeEncodeError):
        return None


def verify(secret: bytes, body: bytes, header_value: str | None, config: HmacConfig) -> bool:
    """True when `header_value` carries a valid signature of `body`.

    The configured prefix must be present exactly as configured (a value without it is a bad
    signature); the digest's hex may be upper- or lowercase.
    """
    if not header_value:
        return False
    value = header_value.strip()
    presented: bytes | None = None
    if value.startswith(config.prefix):
        presented = _decode(value[len(config.prefix) :], config.encoding)
    expected = hmac.new(secret, body, DIGESTS[config.algorithm]).digest()
    if presented is None:
        presented = b""
    return hmac.compare_digest(presented, expected)
