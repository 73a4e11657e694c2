"""DNS verification through a real DNS client (dnspython) against the resolver the server is
configured with (`platform server --dns-resolver host:port`, or $PLATFORM_DNS_RESOLVER; neither: the
system's resolvers). Not yet verified is an answer, not an error."""

from __future__ import annotations

import os
from dataclasses import dataclass

from engine.domains.records import CHALLENGE, TOKEN_PREFIX
from engine.errors import InvalidInput

RESOLVER_ENV = "PLATFORM_DNS_RESOLVER"


@dataclass(frozen=True)
class Check:
    verified: bool
    result: str


def parse_resolver(spec: str | None) -> tuple[str, int] | None:
    """`host:port` (or `host`, port 53; `[v6]:port`); None: the system's resolvers."""
    spec = (spec if spec is not None else os.environ.get(RESOLVER_ENV, "")).strip()
    if not spec:
        return None
    host, port = spec, "53"
    if spec.startswith("["):
        host, _, rest = spec[1:].partition("]")
        port = rest.lstrip(":") or "53"
    elif spec.count(":") == 1:
        host, port = spec.split(":")
    if not port.isdigit() or not 0 < int(port) < 65536 or not host:
        raise InvalidInput(f"DNS resolver {spec!r} is not host:port", hint="e.g. --dns-resolver 127.0.0.1:5353")
    return host, int(port)


def check(hostname: str, token: str, resolver: tuple[str, int] | None, timeout: float = 3.0) -> Check:
    """Whether `_platform-challenge.<hostname>` carries this claim's token, asked now (no cache)."""
    import dns.exception
    import dns.resolver

    r = dns.resolver.Resolver(configure=resolver is None)
    if resolver is not None:
        r.nameservers = [resolver[0]]
        r.port = resolver[1]
    r.lifetime = timeout
    name = f"{CHALLENGE}.{hostname}"
    try:
        answer = r.resolve(name, "TXT", search=False)
    except dns.resolver.NXDOMAIN:
        return Check(False, f"{name} does not exist yet (NXDOMAIN)")
    except dns.resolver.NoAnswer:
        return Check(False, f"{name} has no TXT record yet")
    except dns.exception.Timeout:
        return Check(False, f"the resolver did not answer for {name} within {timeout:g}s")
    except dns.exception.DNSException as exc:
        return Check(False, f"DNS lookup of {name} failed: {exc}")
    values = {b"".join(getattr(rd, "strings", ())).decode(errors="replace") for rd in answer}
    if TOKEN_PREFIX + token in values:
        return Check(True, f"{name} carries this organization's token")
    return Check(False, f"{name} has TXT records, none with this organization's token")
