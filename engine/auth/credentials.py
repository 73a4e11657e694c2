"""The credentials file both programs share, and the precedence resolvers (docs/reference-auth.md#the-credentials-file;
the precedence: docs/reference-auth.md#framework-login-logout-cloud).

File: `$XDG_CONFIG_HOME/framework/credentials.json` (default `~/.config/framework/...`), mode 0600
in a 0700 directory: `{"version": 1, "entries": {"<server or endpoint URL>": {...}}}`.

- Writes are read-modify-write under an exclusive fcntl lock on `credentials.json.lock`, through a
  0600 temp file, fsync and rename: two logins at once both keep their entry, a crash leaves the
  old file or the new one, never half of one.
- A file readable by group or others (e.g. 0644) is narrowed to 0600 on the next read, with a
  warning that the tokens in it may have been read (rotate them: logout and revoke).
- A corrupt file (not JSON, wrong shape) is a clear error naming the file; it is never
  overwritten or removed by the programs: fix or delete it by hand.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel, Field

from engine.errors import EngineError

DEFAULT_SERVER = "http://127.0.0.1:8080"  # `platform server`'s default address
DEFAULT_CONTROL_PLANE = DEFAULT_SERVER  # the default hosted service (the control plane is `platform server`)


CONTROL_PLANE_ELSEWHERE = ("point to one: framework login --endpoint URL, or the environment's "
                           "framework.ControlPlane endpoint")


def start_or_point_hint(elsewhere: str = CONTROL_PLANE_ELSEWHERE) -> str:
    """What to do when a server or control plane is not there: start one, or point to another."""
    return f"start one with `platform server` (it listens on {DEFAULT_SERVER} by default), or {elsewhere}"
CONTROL_PLANE_TOKEN_ENV = "FRAMEWORK_CONTROL_PLANE_TOKEN"
HELPER_ENV = "FRAMEWORK_CREDENTIAL_HELPER"


class CredentialsError(EngineError):
    code = "credentials_file"


class NotLoggedIn(EngineError):
    code = "not_logged_in"


class Entry(BaseModel):
    """One stored login. `access_token` is a secret: never printed, never in --json."""

    access_token: str = Field(repr=False)
    token_type: str = "Bearer"
    scope: str = ""
    expires_at: float  # Unix seconds
    user: str | None = None
    organization: str | None = None
    program: str = "platform"
    created_at: float = 0.0

    def expired(self, now: float | None = None) -> bool:
        return self.expires_at <= (time.time() if now is None else now)


def config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or ""
    return (Path(base) if base and os.path.isabs(base) else Path.home() / ".config") / "framework"


def credentials_path() -> Path:
    return config_dir() / "credentials.json"


def normalize(url: str) -> str:
    """The entry key of a server or endpoint: scheme://host[:port][/path], no trailing slash."""
    from urllib.parse import urlsplit

    url = url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise EngineError(f"invalid server URL {url!r}", code="usage", exit_code=2,
                          hint="give an http:// or https:// URL, e.g. http://127.0.0.1:8080")
    return f"{parts.scheme}://{parts.netloc.lower()}{parts.path}"


def _check_mode(path: Path, warnings: list[str]) -> None:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        os.chmod(path, 0o600)
        warnings.append(
            f"{path} was readable by others (mode {mode:04o}); it is now 0600. The tokens in it may have been "
            "read: sign in again and revoke the old ones"
        )


def _parse(path: Path) -> dict[str, Entry]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        raw = doc["entries"]
        if not isinstance(raw, dict):
            raise TypeError("entries is not an object")
        return {str(k): Entry.model_validate(v) for k, v in raw.items()}
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        reason = exc.__class__.__name__ if not isinstance(exc, ValueError) else str(exc).splitlines()[0]
        raise CredentialsError(
            f"the credentials file {path} is corrupt ({reason}); it was left as it is",
            hint=f"fix it, or remove it and sign in again (rm {path})",
        ) from None


class Store(BaseModel):
    path: Path
    entries: dict[str, Entry]
    warnings: list[str] = []


def load() -> Store:
    """The stored logins (no lock: a reader sees the old file or the new one)."""
    path = credentials_path()
    warnings: list[str] = []
    if not path.exists():
        return Store(path=path, entries={})
    _check_mode(path, warnings)
    return Store(path=path, entries=_parse(path), warnings=warnings)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def update(change: Callable[[dict[str, Entry]], None]) -> Store:
    """Read, change and write the file atomically under the lock."""
    path = credentials_path()
    with _locked(path):
        current = load()
        entries = dict(current.entries)
        change(entries)
        doc = {"version": 1, "entries": {k: v.model_dump(mode="json") for k, v in sorted(entries.items())}}
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(doc, fh, indent=2)
                fh.write("\n")
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    return Store(path=path, entries=entries, warnings=current.warnings)


def save(key: str, entry: Entry) -> Store:
    def put(entries: dict[str, Entry]) -> None:
        entries[normalize(key)] = entry

    return update(put)


def remove(key: str) -> bool:
    """Forget the entry of `key` only; whether there was one."""
    found: list[bool] = []

    def drop(entries: dict[str, Entry]) -> None:
        found.append(entries.pop(normalize(key), None) is not None)

    if not credentials_path().exists():
        return False
    update(drop)
    return found[0]


# --- precedence --------------------------------------------------------------------------------


class Resolved(BaseModel):
    """The credential a call would use, and where it and its server came from. `token` is excluded
    from every rendering (model_dump / --json)."""

    server: str
    server_source: str  # flag | env | default | declared
    token: str | None = Field(default=None, exclude=True, repr=False)
    token_source: str | None = None  # flag | env:<NAME> | credentials | helper
    user: str | None = None
    organization: str | None = None
    expires_at: float | None = None
    expired_login: bool = False
    credentials_file: str
    warnings: list[str] = []

    def require(self, program: str = "platform") -> str:
        if self.token:
            return self.token
        what = "login has expired" if self.expired_login else "no login"
        how = "platform auth login --server " if program == "platform" else "framework login --endpoint "
        raise NotLoggedIn(f"{what} for {self.server}", exit_code=2 if program == "framework" else 1,
                          hint=f"run: {how}{self.server}")


def resolve_platform(server_flag: str | None = None, *, read_file: bool = True) -> Resolved:
    """`platform` commands: server from --server > PLATFORM_SERVER_URL > built-in default; token
    from PLATFORM_TOKEN > the credentials entry for that server. No network call."""
    if server_flag:
        server, source = normalize(server_flag), "flag"
    elif os.environ.get("PLATFORM_SERVER_URL"):
        server, source = normalize(os.environ["PLATFORM_SERVER_URL"]), "env"
    else:
        server, source = DEFAULT_SERVER, "default"
    resolved = Resolved(server=server, server_source=source, credentials_file=str(credentials_path()))
    if os.environ.get("PLATFORM_TOKEN"):
        resolved.token, resolved.token_source = os.environ["PLATFORM_TOKEN"], "env:PLATFORM_TOKEN"
        return resolved
    if read_file:
        _from_file(resolved)
    return resolved


def _from_file(resolved: Resolved) -> None:
    stored = load()
    resolved.warnings = stored.warnings
    entry = stored.entries.get(resolved.server)
    if entry is None:
        return
    resolved.user, resolved.organization, resolved.expires_at = entry.user, entry.organization, entry.expires_at
    if entry.expired():
        resolved.expired_login = True
        return
    resolved.token, resolved.token_source = entry.access_token, "credentials"


def platform_token_for(url: str) -> str | None:
    """The stored login for `url` (used when PLATFORM_TOKEN is unset), or None."""
    try:
        resolved = resolve_platform(url)
    except EngineError:
        return None
    return resolved.token


def resolve_control_plane(
    endpoint: str | None, *, token_flag: str | None = None, token_env: str | None = None,
    declared: bool = False,
) -> Resolved:
    """Any control-plane call (credential precedence): 1) --token; 2) the environment's
    declared token variable (default FRAMEWORK_CONTROL_PLANE_TOKEN); 3) the credentials-file entry
    for the endpoint; 4) $FRAMEWORK_CREDENTIAL_HELPER (also when the stored login has expired)."""
    server = normalize(endpoint) if endpoint else DEFAULT_CONTROL_PLANE
    source = "declared" if declared and endpoint else ("flag" if endpoint else "default")
    resolved = Resolved(server=server, server_source=source, credentials_file=str(credentials_path()))
    variable = token_env or CONTROL_PLANE_TOKEN_ENV
    if token_flag:
        resolved.token, resolved.token_source = token_flag, "flag"
    elif os.environ.get(variable):
        resolved.token, resolved.token_source = os.environ[variable], f"env:{variable}"
    else:
        _from_file(resolved)
        if resolved.token is None and os.environ.get(HELPER_ENV):
            token = run_helper(os.environ[HELPER_ENV], server)
            if token:
                resolved.token, resolved.token_source = token, "helper"
    return resolved


def run_helper(helper: str, endpoint: str) -> str | None:
    """`$FRAMEWORK_CREDENTIAL_HELPER get <endpoint>`: the token is the first line of its stdout;
    a non-zero exit or empty output means it has none. Its stderr passes through."""
    import shlex

    try:
        done = subprocess.run([*shlex.split(helper), "get", endpoint], stdout=subprocess.PIPE, text=True,
                              timeout=60, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CredentialsError(f"the credential helper {helper!r} failed: {exc}") from None
    line = done.stdout.strip().splitlines()[0].strip() if done.stdout.strip() else ""
    return line if done.returncode == 0 and line else None


class SignedIn(BaseModel):
    """One line of "who is signed in where" (the dashboard's status line); never the token."""

    server: str
    user: str | None
    organization: str | None
    source: str  # credentials | env:PLATFORM_TOKEN
    expired: bool = False

    def label(self) -> str:
        who = "PLATFORM_TOKEN" if self.source == "env:PLATFORM_TOKEN" else (self.user or "a token")
        return f"{who} @ {self.server}" + (" (expired)" if self.expired else "")


def signed_in(server_hint: str | None = None) -> list[SignedIn]:
    """Every stored login, and PLATFORM_TOKEN for the resolved server; no network call. A corrupt
    file yields nothing here (the commands report it)."""
    found: list[SignedIn] = []
    if os.environ.get("PLATFORM_TOKEN"):
        server = resolve_platform(server_hint or None, read_file=False).server
        found.append(SignedIn(server=server, user=None, organization=None, source="env:PLATFORM_TOKEN"))
    try:
        entries = load().entries
    except CredentialsError:
        return found
    now = time.time()
    for server, entry in sorted(entries.items()):
        found.append(SignedIn(server=server, user=entry.user, organization=entry.organization, source="credentials",
                              expired=entry.expired(now)))
    return found
