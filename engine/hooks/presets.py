"""Webhook sender presets (docs/reference-webhooks.md#endpoints, HMAC examples): the header, algorithm,
prefix and encoding each well-known sender signs with, and the header that carries its delivery id.

The one table both halves read: a platform trigger's `webhook.hmac` is any `HmacConfig`, and these
are the named ones; `framework scaffold webhook --sender` generates its Go verifier from the same rows.
"""

from __future__ import annotations

from typing import NamedTuple

from engine.hooks.models import HmacConfig


class SenderPreset(NamedTuple):
    hmac: HmacConfig
    delivery_header: str  # the sender's own delivery id; the platform's generic keys are tried after it


# The platform's de-duplication keys, in order (docs/reference-webhooks.md#endpoints, De-duplication).
DELIVERY_HEADERS = ("Idempotency-Key", "X-Idempotency-Key", "X-Request-Id", "X-Delivery-Id")

SENDERS: dict[str, SenderPreset] = {
    "generic": SenderPreset(HmacConfig(), "X-Delivery-Id"),
    "github": SenderPreset(HmacConfig(header="X-Hub-Signature-256", prefix="sha256="), "X-GitHub-Delivery"),
    "github-legacy": SenderPreset(HmacConfig(header="X-Hub-Signature", algorithm="sha1", prefix="sha1="),
                                  "X-GitHub-Delivery"),
    "shopify": SenderPreset(HmacConfig(header="X-Shopify-Hmac-Sha256", encoding="base64"), "X-Shopify-Webhook-Id"),
}
