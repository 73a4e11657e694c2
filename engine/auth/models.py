"""Documents the token API answers with, shared by the server (engine.auth.api) and the CLI
clients (engine.auth.client); no database imports here (the command path stays light)."""

from __future__ import annotations

from pydantic import BaseModel


class TokenInfo(BaseModel):
    """A token's metadata (never its secret)."""

    id: str
    kind: str
    name: str | None
    scope: str
    created_at: str
    expires_at: str
    revoked: bool = False


class Minted(BaseModel):
    """A token as minted: the secret is shown once, to the caller."""

    id: str
    kind: str
    name: str | None
    token: str
    scope: str
    expires_at: str
    expires_in: int


class WhoAmI(BaseModel):
    kind: str
    user: str | None = None
    organization: str | None = None
    role: str | None = None
    scope: list[str] = []
    expires_at: str | None = None


class Tokens(BaseModel):
    tokens: list[TokenInfo]


class Revoked(BaseModel):
    revoked: list[str]


def iso(us: int) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(us / 1e6, tz=dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(text: str) -> float:
    import datetime as dt

    return dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC).timestamp()
