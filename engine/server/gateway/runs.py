"""Tools of a run that `platform server` executes (a webhook's automation) with `target:
daemon:<name>`: the run worker finds the daemon's live stream in daemon_streams, mints a
short-lived credential of kind `run` for the daemon's organization (named `run@<run id>`, 1 hour,
accepted only by the daemon tools route, revoked when the run ends), and posts each tool call to
the daemon API of the process holding the stream. A name that two organizations' daemons share
is refused (ambiguous) rather than guessed."""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Engine

from engine.errors import EngineError
from engine.server.gateway import streams
from engine.server.gateway.service import heartbeat_s

RUN_TTL_S = 3600


class RunDaemonTools:
    def __init__(self, engine: Engine, name: str, run_id: str) -> None:
        from engine.auth.tokens import mint
        from engine.serverstore import store

        self.engine, self.name, self.run_id = engine, name, run_id
        rows = self._rows()
        orgs = {r.org_id for r in rows}
        if len(orgs) > 1:
            raise EngineError(f"daemon {name!r} is ambiguous: {len(orgs)} organizations have a daemon of that name",
                              code="ambiguous_daemon")
        self.org_id = rows[0].org_id
        with store.write(engine) as conn:
            minted = mint(conn, kind="run", org_id=self.org_id, scope="platform:daemon-run", ttl_s=RUN_TTL_S,
                          name=f"run@{run_id}")
        self.token, self.token_id = minted.token, minted.id

    def _rows(self) -> list[streams.StreamRow]:
        rows = streams.holders(self.engine, self.name, int(heartbeat_s() * 3 * 1_000_000))
        if not rows:
            raise EngineError(f"daemon {self.name!r} is not connected", code="daemon_not_connected",
                              hint="start it on its machine: platform daemon start")
        return rows

    def call(self, tool: str, params: Any) -> Any:
        import httpx

        from engine.tools.base import ToolResult

        row = next((r for r in self._rows() if r.org_id == self.org_id), None)
        if row is None:
            raise EngineError(f"daemon {self.name!r} is not connected", code="daemon_not_connected")
        try:
            r = httpx.post(f"{row.node_url}/api/daemons/{self.name}/tools/{tool}", timeout=None,
                           json={"params": params, "session": self.run_id},
                           headers={"Authorization": f"Bearer {self.token}"})
            doc = r.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise EngineError(f"daemon {self.name}: the server holding its stream did not answer: {exc}",
                              code="daemon_not_connected") from None
        if r.status_code == 200:
            return ToolResult(output=str(doc.get("output", "")), is_error=bool(doc.get("is_error")),
                              data=dict(doc.get("data") or {}))
        err = doc.get("error") or {}
        return ToolResult(output=f"error: {err.get('message', r.status_code)}\n", is_error=True, data={"error": err})

    def close(self) -> None:
        from sqlalchemy import update

        from engine.auth import tables as t
        from engine.serverstore import store

        with store.write(self.engine) as conn:
            conn.execute(update(t.tokens).where(t.tokens.c.id == self.token_id).values(revoked_at=store.now_us()))
