"""The daemon_streams table (assets/migrations/0005_daemon_streams.sql): which server process
holds each connected daemon's stream, so any process can route a request to it."""

from __future__ import annotations

import json
from dataclasses import dataclass

from sqlalchemy import BigInteger, Column, MetaData, Table, Text, and_, delete, insert, select, update
from sqlalchemy.engine import Engine

from engine.serverstore import store

metadata = MetaData()
daemon_streams = Table(
    "daemon_streams",
    metadata,
    Column("org_id", Text, primary_key=True),
    Column("name", Text, primary_key=True),
    Column("instance_id", Text, nullable=False),
    Column("node", Text, nullable=False),
    Column("node_url", Text, nullable=False),
    Column("hostname", Text, nullable=False),
    Column("roots", Text, nullable=False),
    Column("version", Text, nullable=False),
    Column("connected_at", BigInteger, nullable=False),
    Column("heartbeat_at", BigInteger, nullable=False),
)


@dataclass(frozen=True)
class StreamRow:
    org_id: str
    name: str
    instance_id: str
    node: str
    node_url: str
    hostname: str
    roots: list[str]
    version: str
    connected_at: int
    heartbeat_at: int


def claim(engine: Engine, *, org_id: str, name: str, instance_id: str, node: str, node_url: str, hostname: str,
          roots: list[str], version: str) -> None:
    """This process now holds the daemon's stream (replacing whatever row was there)."""
    now = store.now_us()
    values = dict(instance_id=instance_id, node=node, node_url=node_url, hostname=hostname,
                  roots=json.dumps(roots), version=version, connected_at=now, heartbeat_at=now)
    key = and_(daemon_streams.c.org_id == org_id, daemon_streams.c.name == name)
    with store.write(engine) as conn:
        if conn.execute(update(daemon_streams).where(key).values(**values)).rowcount == 0:
            conn.execute(insert(daemon_streams).values(org_id=org_id, name=name, **values))


def beat(engine: Engine, *, org_id: str, name: str, instance_id: str, node: str) -> bool:
    """Refresh the heartbeat; False when the row is no longer ours (a newer start took it)."""
    key = and_(daemon_streams.c.org_id == org_id, daemon_streams.c.name == name,
               daemon_streams.c.instance_id == instance_id, daemon_streams.c.node == node)
    with store.write(engine) as conn:
        return bool(conn.execute(update(daemon_streams).where(key).values(heartbeat_at=store.now_us())).rowcount)


def release(engine: Engine, *, org_id: str, name: str, instance_id: str, node: str) -> None:
    key = and_(daemon_streams.c.org_id == org_id, daemon_streams.c.name == name,
               daemon_streams.c.instance_id == instance_id, daemon_streams.c.node == node)
    with store.write(engine) as conn:
        conn.execute(delete(daemon_streams).where(key))


def _row(r: object) -> StreamRow:
    m = r._mapping  # type: ignore[attr-defined]
    return StreamRow(org_id=m["org_id"], name=m["name"], instance_id=m["instance_id"], node=m["node"],
                     node_url=m["node_url"], hostname=m["hostname"], roots=json.loads(m["roots"]),
                     version=m["version"], connected_at=m["connected_at"], heartbeat_at=m["heartbeat_at"])


def live(engine: Engine, org_id: str, stale_us: int, name: str | None = None) -> list[StreamRow]:
    """Rows whose holder refreshed them within `stale_us` (older ones: a process that died)."""
    cond = and_(daemon_streams.c.org_id == org_id, daemon_streams.c.heartbeat_at > store.now_us() - stale_us)
    if name is not None:
        cond = and_(cond, daemon_streams.c.name == name)
    with store.read(engine) as conn:
        return [_row(r) for r in conn.execute(select(daemon_streams).where(cond).order_by(daemon_streams.c.name))]


def holders(engine: Engine, name: str, stale_us: int) -> list[StreamRow]:
    """Live rows of every organization's daemon called `name` (a server-side run names a daemon)."""
    cond = and_(daemon_streams.c.name == name, daemon_streams.c.heartbeat_at > store.now_us() - stale_us)
    with store.read(engine) as conn:
        return [_row(r) for r in conn.execute(select(daemon_streams).where(cond))]
