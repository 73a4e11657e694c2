"""Hostnames and the DNS records a claim asks the organization to publish (`domain add`
prints DNS to publish, docs/reference-domains.md#dns-to-publish; apex and www are separate names).

Ownership is proven by a TXT record `_platform-challenge.<hostname>` carrying the claim's token
(one per organization's claim, so two organizations claiming one name publish different values and
only the real owner of the zone can publish theirs). Routing is an A record to the gateway's address
for an apex name, a CNAME to the gateway's hostname for any other (when one is configured; an A
record otherwise). Apex here means two labels (`example.com`); the public-suffix list is not
consulted.
"""

from __future__ import annotations

import os
import re
from typing import Any

from engine.errors import InvalidInput

CHALLENGE = "_platform-challenge"
TOKEN_PREFIX = "platform-verify="
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


def normalize(hostname: str) -> str:
    """The hostname in canonical form (lower case, no trailing dot), or InvalidInput (exit 1)."""
    name = hostname.strip().lower().rstrip(".")
    labels = name.split(".")
    if (len(name) > 253 or len(labels) < 2 or not all(_LABEL.match(label) for label in labels)
            or labels[-1].isdigit()):
        raise InvalidInput(f"{hostname!r} is not a hostname",
                           hint="a DNS name with at least two labels, e.g. example.com or www.example.com")
    return name


def is_apex(hostname: str) -> bool:
    return hostname.count(".") == 1


def gateway_address() -> str:
    return os.environ.get("PLATFORM_GATEWAY_ADDRESS") or "127.0.0.1"


def required(hostname: str, token: str) -> list[dict[str, Any]]:
    """The records to publish for this claim: ownership (TXT) and routing (A or CNAME)."""
    records: list[dict[str, Any]] = [
        {"type": "TXT", "name": f"{CHALLENGE}.{hostname}", "value": TOKEN_PREFIX + token, "purpose": "ownership"}
    ]
    gateway_host = os.environ.get("PLATFORM_GATEWAY_HOSTNAME")
    if is_apex(hostname) or not gateway_host:
        records.append({"type": "A", "name": hostname, "value": gateway_address(), "purpose": "routing"})
    else:
        records.append({"type": "CNAME", "name": hostname, "value": gateway_host, "purpose": "routing"})
    return records
