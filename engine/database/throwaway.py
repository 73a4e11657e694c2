"""A throwaway PostgreSQL server from the local server binaries (initdb, pg_ctl), on a Unix
socket in a temporary directory: no container runtime, no TCP port. Used by `db squash`.

PostgreSQL refuses to run as root; as root the binaries run as the `postgres` user (runuser).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from engine.database.dsn import Dsn
from engine.database.errors import DatabaseAuthoringError

PORT = 5432  # only names the socket file; nothing listens on TCP


def bindir() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    if found:
        return Path(found[-1]).parent
    which = shutil.which("pg_ctl")
    if which:
        return Path(which).resolve().parent
    raise DatabaseAuthoringError("PostgreSQL server binaries (initdb, pg_ctl, pg_dump) are not installed",
                                 hint="install the postgresql package (make postgres does it)")


def tool(name: str) -> str:
    return str(bindir() / name)


@contextmanager
def server() -> Iterator[tuple[Dsn, list[str]]]:
    """(DSN of its `postgres` database, the command prefix to run its binaries)."""
    as_root = os.geteuid() == 0
    prefix = ["runuser", "-u", "postgres", "--"] if as_root else []
    user = "postgres" if as_root else (os.environ.get("USER") or "postgres")
    tmp = Path(tempfile.mkdtemp(prefix="framework-squash-"))
    if as_root:
        shutil.chown(tmp, "postgres", "postgres")
    data = tmp / "data"

    def run(*args: str) -> None:
        proc = subprocess.run([*prefix, *args], capture_output=True, text=True, timeout=120, check=False)
        if proc.returncode != 0:
            raise DatabaseAuthoringError(f"{Path(args[0]).name} failed: {(proc.stderr or proc.stdout).strip()[:400]}")

    try:
        run(tool("initdb"), "-D", str(data), "-A", "trust", "-U", user, "--no-sync", "-E", "UTF8")
        run(tool("pg_ctl"), "-D", str(data), "-l", str(tmp / "log"), "-w", "-t", "60", "-o",
            f"-p {PORT} -k {tmp} -c listen_addresses='' -c fsync=off", "start")
        try:
            yield Dsn(f"postgresql://{user}@/postgres?host={tmp}&port={PORT}"), prefix
        finally:
            subprocess.run([*prefix, tool("pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
                           capture_output=True, timeout=60, check=False)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
