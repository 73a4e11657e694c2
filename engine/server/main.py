"""Start `platform server`: open the store (SQLite in the data dir, or PostgreSQL from
DATABASE_URL), apply the embedded migrations, create the admin API token on first start (printed
once, stored hashed), then serve on uvicorn (uvloop + httptools) with the worker pool running."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

from pydantic import BaseModel
from sqlalchemy.engine import Engine

from engine.errors import EngineError
from engine.serverstore import store
from engine.serverstore.url import database_url, default_data_dir

__all__ = ["ServerConfig", "database_url", "default_data_dir", "serve"]



class ServerConfig(BaseModel):
    host: str = "127.0.0.1"
    port: int = 8080
    data_dir: Path
    workers: int = 2
    gateway_port: int | None = None
    """The daemon gateway's port; default: the HTTP port + 1 (0 when the HTTP port is 0)."""


def ensure_admin_token(engine: Engine) -> str | None:
    """Create the admin API token if there is none; return it only to the process that created it."""
    from sqlalchemy import select

    from engine.auth.bearer import new_token, token_hash
    from engine.server.ingest import _insert_ignore

    token = new_token("plt")
    with store.write(engine) as conn:
        if conn.execute(select(store.api_tokens.c.name).where(store.api_tokens.c.name == "admin")).first():
            return None
        created = conn.execute(
            _insert_ignore(conn, store.api_tokens)
            .values(name="admin", token_hash=token_hash(token), created_at=store.now_us())
            .returning(store.api_tokens.c.name)
        ).first()
        return token if created else None


def _refuse_taken_ports(server_host: str, gateway_port: int, http: socket.socket) -> None:
    """The other listeners (daemon gateway, bulk channel, serving gateway) start inside the app's
    lifespan, after "listening" is printed: a port another process holds is refused here first, with
    the flag that chose it, instead of a failed lifespan."""
    def env_port(name: str) -> int:
        given = os.environ.get(name) or "0"
        if not given.isdigit() or int(given) > 65535:
            raise EngineError(f"{name}={given!r} is not a port number (0-65535)")
        return int(given)

    serving = os.environ.get("PLATFORM_GATEWAY_HOST") or "127.0.0.1"
    wanted = [
        (server_host, gateway_port, "--gateway-port"),
        (server_host, env_port("PLATFORM_DAEMON_BULK_PORT"), "PLATFORM_DAEMON_BULK_PORT"),
        (serving, env_port("PLATFORM_GATEWAY_HTTP_PORT"), "--gateway-http-port"),
        (serving, env_port("PLATFORM_GATEWAY_HTTPS_PORT"), "--gateway-https-port"),
    ]
    for host, port, flag in wanted:
        if port <= 0:
            continue
        probe = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
        try:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
        except OSError as exc:
            http.close()
            raise EngineError(
                f"cannot listen on {host}:{port} ({flag}): {exc.strerror}",
                hint=f"choose another {flag} (0 lets the system pick one)",
            ) from None
        finally:
            probe.close()


def serve(config: ServerConfig) -> int:
    import gc

    import uvicorn

    from engine.hooks.secrets import SecretBox
    from engine.server.app import ServerState, build_app
    from engine.server.http_protocol import GatheringHttpProtocol
    from engine.server.journaled import journal_enabled
    from engine.server.recorder import IN_FLIGHT_COMMIT, IN_FLIGHT_JOURNAL, RecorderClient
    from engine.server.runner import RunnerClient
    from engine.serverstore.migrations import up

    data_dir = config.data_dir.resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(data_dir, 0o700)  # holds the database, the secret key and run workspaces
    try:
        sock = socket.socket(socket.AF_INET6 if ":" in config.host else socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((config.host, config.port))
        sock.listen(2048)
    except OSError as exc:
        raise EngineError(
            f"cannot listen on {config.host}:{config.port}: {exc.strerror}",
            hint="choose another --port (0 lets the system pick one)",
        ) from None
    port = sock.getsockname()[1]
    gateway_port = config.gateway_port if config.gateway_port is not None else (config.port + 1 if config.port else 0)
    _refuse_taken_ports(config.host, gateway_port, sock)
    # Only once listening: an admin token created by a start that then fails would never be shown.
    url = database_url(data_dir)
    engine = store.open_engine(url)
    up(engine)
    box = SecretBox(data_dir)
    admin = ensure_admin_token(engine)
    workers = RunnerClient(url, data_dir, size=config.workers)
    window = IN_FLIGHT_JOURNAL if journal_enabled(engine) else IN_FLIGHT_COMMIT
    committer = RecorderClient(url, data_dir, on_enqueued=workers.wake, window=window)
    # The children, forked before the server has a thread or an open connection (its pool opens
    # them again on demand): they start with the modules imported here (engine/server/children.py).
    engine.dispose()
    committer.prefork()
    workers.prefork()
    from engine.server.gateway.service import Gateway

    # as documented: --port 0 (the system picks) gives a system-picked gateway port too, never the
    # picked port + 1 (another process may hold it: the start would fail)
    gateway = Gateway(engine, config.host, gateway_port, announce=True)
    gateway.node_url = os.environ.get("PLATFORM_NODE_URL") or f"http://{config.host}:{port}"
    app = build_app(
        ServerState(engine=engine, box=box, data_dir=data_dir, committer=committer, workers=workers, gateway=gateway)
    )
    if admin:
        sys.stdout.write(f"admin API token (shown once; export PLATFORM_TOKEN=...): {admin}\n")
    sys.stdout.write(f"platform server listening on http://{config.host}:{port}\n")
    sys.stdout.flush()
    sys.setswitchinterval(float(os.environ.get("PLATFORM_SWITCH_INTERVAL", "0.005")))
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            loop="uvloop",
            http=GatheringHttpProtocol,
            access_log=False,
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=5,
            proxy_headers=False,
        )
    )
    # What start-up allocated (modules, the app, SQLAlchemy's tables) lives as long as the process:
    # out of the collector's sight, a full collection is not a pause of every request in flight.
    gc.freeze()
    server.run(sockets=[sock])
    return 0
