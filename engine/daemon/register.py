"""`platform daemon register` (docs/reference-daemon.md#platform-daemon): sign in through the browser if needed,
then ask the server for a long-lived daemon token (kind `daemon`, named `daemon@<name>`, 365 days; registering the
same name again replaces the old token) and store it in the instance's credentials file (0600).
A token never mints a token: registration needs a browser login, not PLATFORM_TOKEN."""

from __future__ import annotations

import time

from pydantic import BaseModel

from engine.auth.models import Minted
from engine.daemon import credentials as dcreds
from engine.daemon.runtime import check_name, instance_path


class DaemonMinted(Minted):
    daemon: str
    gateway: str


class Registered(BaseModel):
    name: str
    server: str
    gateway: str
    credentials_file: str
    token_id: str
    expires_at: str
    logged_in_now: bool


def register(server_flag: str | None, name: str, *, interactive: bool = True,
             gateway: str | None = None) -> tuple[dcreds.DaemonCredentials, Registered]:
    from engine.auth import credentials
    from engine.auth.client import call

    check_name(name)
    resolved = credentials.resolve_platform(server_flag)
    logged_in_now = False
    if resolved.token is None and interactive:
        from engine.auth.login import platform_login

        platform_login(server_flag)
        resolved = credentials.resolve_platform(server_flag)
        logged_in_now = True
    doc = call(resolved, "POST", "/api/daemons/register", DaemonMinted, {"name": name})
    creds = dcreds.DaemonCredentials(server=resolved.server, gateway=gateway or doc.gateway, name=name,
                                     token=doc.token, token_id=doc.id, created_at=time.time())
    path = dcreds.save(instance_path(name), creds)
    return creds, Registered(name=name, server=resolved.server, gateway=creds.gateway, credentials_file=str(path),
                             token_id=creds.token_id, expires_at=doc.expires_at, logged_in_now=logged_in_now)
