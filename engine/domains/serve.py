"""What `platform server` runs for domains: the /v1/domains routes, and the poller that verifies
claims waiting on DNS by itself (every $PLATFORM_DOMAIN_POLL_S seconds, default 30), started and
stopped with the app's lifespan. The resolver is `--dns-resolver` ($PLATFORM_DNS_RESOLVER)."""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.engine import Engine

from engine.domains import dnscheck, service
from engine.domains.routes import domain_routes

__all__ = ["Domains", "domain_routes"]
log = logging.getLogger(__name__)


@dataclass
class Domains:
    engine: Engine
    resolver: tuple[str, int] | None
    interval: float = 30.0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    @classmethod
    def create(cls, engine: Engine) -> Domains:
        try:
            interval = max(0.1, float(os.environ.get("PLATFORM_DOMAIN_POLL_S", "30")))
        except ValueError:
            interval = 30.0
        return cls(engine, dnscheck.parse_resolver(None), interval)

    def mount(self, app: Any) -> None:
        app.state.domains = self

    def poll_once(self) -> int:
        """Check every claim waiting on DNS; the number that went live."""
        went_live = 0
        for org, hostname, token in service.pending(self.engine):
            if self._stop.is_set():
                break
            found = dnscheck.check(hostname, token, self.resolver)
            if found.verified:
                went_live += service.record_check(self.engine, org, hostname, found)["state"] == service.LIVE
        return went_live

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.poll_once()
            except Exception:  # noqa: BLE001 - the poller outlives one bad round (the store restarting)
                log.exception("domain poller round failed")

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="domain-poller", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
