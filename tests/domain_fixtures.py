"""Shared fixtures of the domain tests (docs/reference-domains.md): a real authoritative DNS server on 127.0.0.1
(dnslib, UDP and TCP, a free port) whose zone a test edits to publish or withdraw records, and a
control plane (`platform server`) configured to verify against it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.hosted_fixtures import ALL, admin, mint
from tests.waiting import until
from tests.webhooks_fixtures import Server

DOMAIN_SCOPES = (*ALL, "domain:read", "domain:write")


class Zone:
    """An authoritative server for every name it holds: answers the records published, NXDOMAIN for
    names it has none of (authoritative answer, TTL 0)."""

    def __init__(self) -> None:
        from dnslib.server import DNSLogger, DNSServer

        quiet = DNSLogger(log="-request,-reply,-truncated,-error", prefix=False)
        self.records: dict[tuple[str, str], list[str]] = {}
        self.lock = threading.Lock()
        for attempt in range(20):  # the UDP port the system picked may be taken on TCP: pick again
            self.servers = [DNSServer(self, address="127.0.0.1", port=0, logger=quiet)]
            self.port = self.servers[0].server.server_address[1]
            try:
                self.servers.append(DNSServer(self, address="127.0.0.1", port=self.port, tcp=True, logger=quiet))
                break
            except OSError:
                self.servers[0].server.server_close()
                if attempt == 19:
                    raise
        for s in self.servers:
            s.start_thread()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def publish(self, name: str, rtype: str, value: str) -> None:
        with self.lock:
            self.records.setdefault((name.lower(), rtype), []).append(value)

    def withdraw(self, name: str, rtype: str) -> None:
        with self.lock:
            self.records.pop((name.lower(), rtype), None)

    def resolve(self, request: Any, handler: Any) -> Any:
        from dnslib import QTYPE, RCODE, RR, TXT, A

        reply = request.reply()
        qname = str(request.q.qname).rstrip(".").lower()
        qtype = QTYPE[request.q.qtype]
        with self.lock:
            names = {n for n, _ in self.records}
            values = list(self.records.get((qname, qtype), []))
        if qname not in names:
            reply.header.rcode = RCODE.NXDOMAIN
        for v in values:
            rdata = TXT(v) if qtype == "TXT" else A(v)
            reply.add_answer(RR(qname, getattr(QTYPE, qtype), rdata=rdata, ttl=0))
        return reply

    def stop(self) -> None:
        for s in self.servers:
            s.stop()


@pytest.fixture
def zone() -> Iterator[Zone]:
    z = Zone()
    yield z
    z.stop()


def publish_claim(zone: Zone, domain: dict[str, Any]) -> None:
    """Publish what `domain add` asked for (every record it printed)."""
    for r in domain["dns"]:
        zone.publish(r["name"], r["type"], r["value"])


@pytest.fixture
def domain_plane(server_factory: Callable[..., Server], zone: Zone) -> Iterator[Server]:
    """A control plane whose poller checks pending claims every 0.3 s."""
    srv = server_factory(extra_env={"PLATFORM_DOMAIN_POLL_S": "0.3"}, args=("--dns-resolver", zone.address))
    yield srv
    srv.stop()


@pytest.fixture
def quiet_plane(server_factory: Callable[..., Server], zone: Zone) -> Iterator[Server]:
    """A control plane whose poller waits an hour: only explicit `verify` calls check DNS."""
    srv = server_factory(extra_env={"PLATFORM_DOMAIN_POLL_S": "3600"}, args=("--dns-resolver", zone.address))
    yield srv
    srv.stop()


def domain_org(srv: Server, org: str, scopes: tuple[str, ...] = DOMAIN_SCOPES) -> str:
    admin(srv, "org", "add", org)
    admin(srv, "org", "grant", org, *DOMAIN_SCOPES)
    return mint(srv, org, scopes)


def domain_org_in_store(srv: Server, org: str, scopes: tuple[str, ...] = DOMAIN_SCOPES) -> str:
    """domain_org through the engine calls its admin commands make, in this process (the admin CLI is not
    the rule of the tests that use it)."""
    from tests.hosted_fixtures import mint_in_store, seed_org_in_store

    seed_org_in_store(srv, org, billing=False, scopes=DOMAIN_SCOPES)
    return mint_in_store(srv, org, scopes)


def gateway_ports(srv: Server, timeout: float = 30.0) -> dict[str, int]:
    """The gateway's listeners, as `platform server` printed them."""
    import re

    def found() -> dict[str, int] | None:
        ports = {m.group(1): int(m.group(2)) for line in list(srv.lines)
                 if (m := re.search(r"serving gateway listening on (https?)://[^:]+:(\d+)", line))}
        return ports if len(ports) == 2 else None

    return until(found, timeout, what=lambda: f"the gateway to print its ports: {srv.lines}")


@pytest.fixture
def gateway_plane(server_factory: Callable[..., Server], zone: Zone) -> Iterator[Server]:
    """A control plane with the serving gateway on two free ports and a 0.3 s DNS poller."""
    from tests.hosted_fixtures import stop_hosted

    srv = server_factory(extra_env={"PLATFORM_DOMAIN_POLL_S": "0.3", "PLATFORM_ROLLOUT_TIMEOUT_S": "60"},
                         args=("--dns-resolver", zone.address, "--gateway-http-port", "0",
                               "--gateway-https-port", "0"))
    yield srv
    srv.stop()
    stop_hosted(srv)
