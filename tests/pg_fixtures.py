"""A real PostgreSQL for the multi-process tests, through pytest-postgresql.

PostgreSQL refuses to run as root (CI runs `make test` as root): the server binaries are run as
the `postgres` user with `runuser` on a temporary directory that user owns; pytest-postgresql's
DatabaseJanitor then creates and drops one database per test on it. The Makefile installs the
binaries when they are absent.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest


def _bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    if found:
        return Path(found[-1]).parent
    which = shutil.which("pg_ctl")
    return Path(which).resolve().parent if which else None


@dataclass
class PgServer:
    host: str
    port: int
    user: str

    def url(self, dbname: str) -> str:
        return f"postgresql://{self.user}@{self.host}:{self.port}/{dbname}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    bindir = _bindir()
    if bindir is None:
        pytest.fail("PostgreSQL server binaries (pg_ctl, initdb) are missing: `make test` installs them")
    as_root = os.geteuid() == 0
    prefix = ["runuser", "-u", "postgres", "--"] if as_root else []
    tmp = Path(tempfile.mkdtemp(prefix="platform-pg-", dir="/tmp"))
    if as_root:
        shutil.chown(tmp, "postgres", "postgres")
    data, log = tmp / "data", tmp / "server.log"
    user = "postgres" if as_root else os.environ.get("USER", "postgres")
    subprocess.run(
        [*prefix, str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", user, "--no-sync"],
        check=True,
        capture_output=True,
    )
    port = _free_port()
    options = f"-p {port} -k {tmp} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
    subprocess.run(
        [
            *prefix,
            str(bindir / "pg_ctl"),
            "-D",
            str(data),
            "-o",
            options,
            "-l",
            str(log),
            "-w",
            "-t",
            "60",
            "start",
        ],
        check=True,
        capture_output=True,
    )
    try:
        yield PgServer(host="127.0.0.1", port=port, user=user)
    finally:
        subprocess.run(
            [*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
            capture_output=True,
        )
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    """A fresh database for one test (created and dropped by pytest-postgresql's janitor)."""
    from pytest_postgresql.janitor import DatabaseJanitor

    dbname = "t_" + uuid.uuid4().hex[:12]
    with DatabaseJanitor(
        user=pg_server.user, host=pg_server.host, port=pg_server.port, dbname=dbname, password=None
    ):
        yield pg_server.url(dbname)


@pytest.fixture(scope="module")
def module_pg_url(pg_server: PgServer) -> Iterator[str]:
    """A fresh database for one test module whose tests share it (each keeps its own names)."""
    from pytest_postgresql.janitor import DatabaseJanitor

    dbname = "m_" + uuid.uuid4().hex[:12]
    with DatabaseJanitor(
        user=pg_server.user, host=pg_server.host, port=pg_server.port, dbname=dbname, password=None
    ):
        yield pg_server.url(dbname)
