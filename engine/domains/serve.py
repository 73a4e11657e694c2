"""What `platform server` runs for domains: the /v1/domains routes, the poller that verifies
claims waiting on DNS by itself (every $PLATFORM_DOMAIN_POLL_S seconds, default 30), and the serving
gateway (`--gateway-http-port` / `--gateway-https-port`, i.e. $PLATFORM_GATEWAY_HTTP_PORT /
$PLATFORM_GATEWAY_HTTPS_PORT; neither: no gateway), started and stopped with the app's lifespan. The
resolver is `--dns-resolver` ($PLATFORM_DNS_RESOLVER). A domain going live gets its certificate.

Live domains are re-verified every $PLATFORM_DOMAIN_RECHECK_S seconds (default 3600): the outcome is
recorded as the last verification; a withdrawn ownership record is reported there but takes nothing
away (a live domain leaves only by `domain rm`). The same round renews each live
domain's certificate once less than a third of its lifetime ($PLATFORM_CERT_LIFETIME_S, default 90
days) remains."""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine

from engine.controlplane.state import runtime_root
from engine.domains import dnscheck, service
from engine.domains.certs import Issuer, LocalCA
from engine.domains.gateway import Gateway
from engine.domains.routes import domain_routes

__all__ = ["Domains", "domain_routes"]
log = logging.getLogger(__name__)


def _seconds(name: str, default: float) -> float:
    try:
        return max(0.1, float(os.environ.get(name) or default))
    except ValueError:
        return default


@dataclass
class Domains:
    engine: Engine
    resolver: tuple[str, int] | None
    issuer: Issuer
    gateway: Gateway | None
    interval: float = 30.0
    recheck: float = 3600.0
    _rechecked: float = 0.0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    @classmethod
    def create(cls, engine: Engine, data_dir: Path) -> Domains:
        interval = _seconds("PLATFORM_DOMAIN_POLL_S", 30.0)
        issuer = LocalCA(data_dir / "gateway", _seconds("PLATFORM_CERT_LIFETIME_S", 90 * 86400.0))
        ports = [os.environ.get(f"PLATFORM_GATEWAY_{s}_PORT") for s in ("HTTP", "HTTPS")]
        gateway = None
        if any(ports):
            http, https = (int(p) if p else None for p in ports)
            gateway = Gateway(engine, issuer, os.environ.get("PLATFORM_GATEWAY_HOST") or "127.0.0.1", http, https,
                              runtime_root(data_dir))
        return cls(engine, dnscheck.parse_resolver(None), issuer, gateway, interval,
                   _seconds("PLATFORM_DOMAIN_RECHECK_S", 3600.0))

    def went_live(self, hostname: str) -> None:
        """Verified: the certificate is issued now (the gateway would otherwise at the first handshake)."""
        try:
            self.issuer.issue(hostname)
        except Exception:  # noqa: BLE001 - issued again at the first handshake
            log.exception("certificate for %s not issued", hostname)

    def mount(self, app: Any) -> None:
        app.state.domains = self

    def poll_once(self) -> int:
        """Check every claim waiting on DNS; the number that went live."""
        went_live = 0
        for org, hostname, token in service.pending(self.engine):
            if self._stop.is_set():
                break
            found = dnscheck.check(hostname, token, self.resolver)
            if found.verified and service.record_check(self.engine, org, hostname, found).state == service.LIVE:
                self.went_live(hostname)
                went_live += 1
        if time.monotonic() - self._rechecked >= self.recheck:
            self._rechecked = time.monotonic()
            self.recheck_live()
        return went_live

    def recheck_live(self) -> None:
        """Re-verify every live domain (recorded; ownership kept) and renew its certificate when due."""
        for org, hostname, token in service.live(self.engine):
            if self._stop.is_set():
                break
            service.record_check(self.engine, org, hostname, dnscheck.check(hostname, token, self.resolver))
            self.went_live(hostname)  # issue() renews a leaf only when due

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.poll_once()
            except Exception:  # noqa: BLE001 - the poller outlives one bad round (the store restarting)
                log.exception("domain poller round failed")

    async def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="domain-poller", daemon=True)
        self._thread.start()
        if self.gateway is not None:
            await self.gateway.start()

    async def stop(self) -> None:
        self._stop.set()
        if self.gateway is not None:
            await self.gateway.stop()
        if self._thread is not None:
            self._thread.join(timeout=5)
