"""Webhook sender presets (docs/reference-webhooks.md#endpoints, the HMAC examples): the header,
algorithm, prefix and encoding each well-known sender signs with, and the header carrying its
delivery id. Neutral ground, importing nothing: the platform's triggers take any `webhook.hmac`
(engine/hooks/models.py `HmacConfig`, whose defaults are the `generic` row) and the framework's
`scaffold webhook --sender` generates its Go verifier from these rows
(docs/reference-authoring.md#workers-and-webhooks).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import NamedTuple


class Sender(NamedTuple):
    header: str
    algorithm: str  # sha256 | sha1 | sha512
    prefix: str
    encoding: str  # hex | base64
    delivery_header: str  # the sender's own delivery id; the platform's generic keys are tried after it

    def sign(self, secret: bytes, body: bytes) -> str:
        """The header value the sender computes for `body`."""
        digest = hmac.new(secret, body, getattr(hashlib, self.algorithm)).digest()
        return self.prefix + (digest.hex() if self.encoding == "hex" else base64.b64encode(digest).decode())


# The platform's de-duplication keys, in order (docs/reference-webhooks.md#endpoints, De-duplication).
DELIVERY_HEADERS = ("Idempotency-Key", "X-Idempotency-Key", "X-Request-Id", "X-Delivery-Id")

SENDERS: dict[str, Sender] = {
    "generic": Sender("X-Signature-256", "sha256", "", "hex", "X-Delivery-Id"),
    "github": Sender("X-Hub-Signature-256", "sha256", "sha256=", "hex", "X-GitHub-Delivery"),
    "github-legacy": Sender("X-Hub-Signature", "sha1", "sha1=", "hex", "X-GitHub-Delivery"),
    "shopify": Sender("X-Shopify-Hmac-Sha256", "sha256", "", "base64", "X-Shopify-Webhook-Id"),
}
