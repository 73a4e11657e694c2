"""`trigger.payload` (docs/reference-webhooks.md#endpoints): body, scrubbed headers and query, content_type;
the de-duplication key.

Secret-carrying entries are removed before anything is stored or shown: the payload is what goes
into history and what a run reads, so no credential that arrived with a delivery survives it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import marshal
from binascii import a2b_base64, b2a_base64
from collections.abc import Callable, Iterable
from typing import Any

# Headers that carry credentials or signatures of well-known senders (plus the configured one).
SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "x-gitlab-token",
        "x-hub-signature",
        "x-hub-signature-256",
        "x-shopify-hmac-sha256",
        "stripe-signature",
        "x-slack-signature",
        "x-twilio-signature",
        "x-twilio-email-event-webhook-signature",
        "x-signature",
        "x-signature-256",
        "x-line-signature",
        "x-square-signature",
        "x-square-hmacsha256-signature",
        "x-zm-signature",
        "x-webhook-signature",
        "webhook-signature",
        "svix-signature",
        "x-hubspot-signature",
        "x-hubspot-signature-v3",
        "x-pagerduty-signature",
        "x-discourse-event-signature",
        "x-paystack-signature",
        "x-razorpay-signature",
        "x-atlassian-webhook-signature",
        "x-hook-signature",
        "x-cc-webhook-signature",
        "x-api-key",
        "x-auth-token",
        "x-webhook-secret",
        "x-webhook-token",
        "x-access-token",
        "x-amz-security-token",
        "x-vercel-signature",
        "linear-signature",
        "sentry-hook-signature",
    }
)
# Header-name fragments that mark a credential whatever the sender (e.g. `X-Acme-Signature`).
SECRET_HEADER_FRAGMENTS = ("signature", "token", "secret", "password", "api-key", "apikey", "auth")
SECRET_QUERY_KEYS = frozenset(
    {
        "token",
        "secret",
        "key",
        "api_key",
        "apikey",
        "api-key",
        "sig",
        "signature",
        "access_token",
        "auth",
        "auth_token",
        "password",
        "passwd",
        "client_secret",
        "code",
        "hmac",
        "x-amz-signature",
        "x-amz-security-token",
        "private_token",
        "refresh_token",
        "id_token",
        "session",
    }
)
SECRET_QUERY_FRAGMENTS = ("token", "secret", "signature", "password", "apikey", "api_key")

_DECODER = json.JSONDecoder()  # what json.loads uses when given no options

DEDUPE_HEADERS = ("idempotency-key", "x-idempotency-key", "x-request-id", "x-delivery-id")


@functools.lru_cache(maxsize=4096)
def is_secret_header(name: str, configured: str | None = None) -> bool:
    lower = name.lower()
    if lower in SECRET_HEADERS or (configured and lower == configured.lower()):
        return True
    return any(fragment in lower for fragment in SECRET_HEADER_FRAGMENTS)


@functools.lru_cache(maxsize=4096)
def is_secret_query_key(name: str) -> bool:
    lower = name.lower()
    return lower in SECRET_QUERY_KEYS or any(fragment in lower for fragment in SECRET_QUERY_FRAGMENTS)


@functools.lru_cache(maxsize=4096)
def _kept_header(name: str, configured: str | None) -> str | None:
    """A header's key in the payload (its lower-case name), or None for a secret-carrying one: one
    cached look-up per header instead of two calls (the recorder scrubs every delivery's headers)."""
    return None if is_secret_header(name, configured) else name.lower()


def scrub_headers(headers: Iterable[tuple[str, str]], configured: str | None = None) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in headers:
        key = _kept_header(name, configured)
        if key is None:
            continue
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


def scrub_query(items: Iterable[tuple[str, str]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in items:
        if is_secret_query_key(name):
            continue
        if name in out:
            prev = out[name]
            out[name] = (prev if isinstance(prev, list) else [prev]) + [value]
        else:
            out[name] = value
    return out


def parse_body(body: bytes) -> Any:
    """Parsed JSON, else the raw text (the payload's `body`)."""
    text = body.decode("utf-8", errors="replace")
    try:
        # json.loads(text) without its per-call checks (type, BOM: a BOM fails here as well, as
        # "Expecting value"): the same value or the same ValueError.
        return _DECODER.decode(text)
    except ValueError:
        return text


def build_payload(
    body: bytes,
    headers: Iterable[tuple[str, str]],
    query: Iterable[tuple[str, str]],
    content_type: str | None,
    configured_header: str | None = None,
) -> dict[str, Any]:
    return _compose(body, *_scrubbed(headers, query, content_type, configured_header))


def _scrubbed(
    headers: Iterable[tuple[str, str]], query: Iterable[tuple[str, str]], content_type: str | None,
    configured_header: str | None,
) -> tuple[dict[str, str], dict[str, Any], str]:
    """A payload's headers and query with every secret-carrying entry removed, and its content type:
    what both the stored payload and its deferred form keep of them."""
    return scrub_headers(headers, configured_header), scrub_query(query), content_type or ""


def _compose(body: bytes, headers: dict[str, str], query: dict[str, Any], content_type: str) -> dict[str, Any]:
    """The payload from the body as received and the headers and query already scrubbed."""
    return {"body": parse_body(body), "headers": headers, "query": query, "content_type": content_type}


# A payload's deferred form (what the delivery journal holds: docs/reference-webhooks.md#durability-and-processes):
# this mark, then base64 of marshal's (body as received, scrubbed headers, scrubbed query, content type).
# A stored payload is JSON, which starts with "{": the two never meet.
DEFERRED_MARK = "\x02"


def deferred_payload(
    body: bytes,
    headers: Iterable[tuple[str, str]],
    query: Iterable[tuple[str, str]],
    content_type: str | None,
    configured_header: str | None = None,
) -> str:
    """The payload's deferred form: the secrets scrubbed now (none reaches the disk), the body's JSON
    parse and the compact encoding left to `stored_payload`, run when the journal's record is indexed
    (off the answer's path: the two were about a fifth of the recorder's CPU per delivery, bench/webhooks.py).
    ASCII with neither NUL nor SOH, as the journal's fields must be."""
    parts = (body, *_scrubbed(headers, query, content_type, configured_header))
    return DEFERRED_MARK + b2a_base64(marshal.dumps(parts), newline=False).decode("ascii")


def stored_payload(field: str) -> str:
    """The payload as stored (`COMPACT(build_payload(...))`, byte for byte) from a journal field: its
    deferred form composed, or a payload already stored as JSON (records written before the deferred
    form) as it is."""
    if not field.startswith(DEFERRED_MARK):
        return field
    body, headers, query, content_type = marshal.loads(a2b_base64(field[1:]))
    return COMPACT(_compose(body, headers, query, content_type))


def compact_encoder() -> Callable[[Any], str]:
    """json.dumps(obj, separators=(",", ":")), byte for byte, with the C encoder built once:
    JSONEncoder.encode builds one per call, with a dict of the containers it entered to refuse a
    circular one (~3 us of the recorder's ~45 per delivery). A payload is json.loads' output in
    fresh dicts, so it holds no cycle (tests/test_webhooks_ingest.py compares the two). Any
    interpreter whose C encoder is missing or differs (checked on a sample) gets JSONEncoder's."""
    slow = json.JSONEncoder(separators=(",", ":")).encode
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return slow

    def default(obj: Any) -> Any:
        raise TypeError(f"Object of type {obj.__class__.__name__} is not JSON serializable")

    try:
        encode = make(None, default, json.encoder.encode_basestring_ascii, None, ":", ",", False, False, True)
        sample = {"body": {"a": [1, 2.5, None, True, "\u00e9\n"]}, "headers": {}, "query": {"k": ["1"]}}
        if "".join(encode(sample, 0)) != slow(sample):
            return slow
    except TypeError:  # another signature
        return slow
    return lambda obj: "".join(encode(obj, 0))


COMPACT = compact_encoder()


def dedupe_key(headers: dict[str, str], body: bytes, received_us: int) -> str:
    """First present of the four key headers; else the body's digest within its minute
    (de-duplication). Hashed so that any key is bounded in size and no header value is stored twice."""
    for name in DEDUPE_HEADERS:
        value = headers.get(name)
        if value:
            return "key:" + hashlib.sha256(value.encode()).hexdigest()
    minute = received_us // 60_000_000
    return f"body:{hashlib.sha256(body).hexdigest()}:{minute}"
