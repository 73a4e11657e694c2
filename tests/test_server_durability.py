"""Durability and multi-process behaviour of `platform server`
(docs/reference-webhooks.md#durability-and-processes): every 202
is in history and its run executes after a SIGKILL; several server processes on one PostgreSQL
database behave as one server."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import httpx

from tests.pg_fixtures import pg_url  # noqa: F401
from tests.waiting import until
from tests.webhooks_fixtures import Server, history, make_trigger, server_factory  # noqa: F401

FAST_LEASE = {"PLATFORM_RUN_LEASE_SECONDS": "1"}


def _load(urls: list[str], total: int, kill_after: int, kill: callable) -> dict[str, str]:
    """Send `total` distinct deliveries, 20 at a time, spread over `urls`; SIGKILL the first
    server once `kill_after` were accepted (20 more in flight, and more to come: the kill lands under
    load; every accepted one becomes a run, so `total` is what the test costs). Returns delivery id ->
    key of every 202."""
    accepted: dict[str, str] = {}
    killed = threading.Event()

    async def one(client: httpx.AsyncClient, n: int, sem: asyncio.Semaphore) -> None:
        async with sem:
            try:
                r = await client.post(
                    urls[n % len(urls)], json={"ref": f"load-{n}"}, headers={"X-Delivery-Id": f"load-{n}"}
                )
            except httpx.HTTPError:
                return  # the killed server dropped it: not accepted, the sender would retry
            if r.status_code == 202:
                accepted[r.json()["delivery"]] = f"load-{n}"
                if len(accepted) >= kill_after and not killed.is_set():
                    killed.set()
                    kill()

    async def main() -> None:
        sem = asyncio.Semaphore(20)
        async with httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=40)) as client:
            await asyncio.gather(*(one(client, n, sem) for n in range(total)))

    asyncio.run(main())
    assert killed.is_set(), "the server was killed under load"
    return accepted


def _all_ran(srv: Server, accepted: dict[str, str]) -> None:
    def done() -> bool:
        rows = {d["id"]: d for d in history(srv, limit=1000)}
        return all(i in rows and rows[i]["run"] and rows[i]["run"]["status"] == "succeeded" for i in accepted)

    # each poll reads the whole history (hundreds of deliveries) from the server: poll every 0.5 s, not 50 ms
    until(done, timeout=120, what="every accepted delivery's run to execute", interval=0.5)
    rows = history(srv, limit=1000)
    assert len({d["run"]["id"] for d in rows if d["run"]}) == len(
        [d for d in rows if d["outcome"] == "run_started"]
    )


def test_sigkill_under_load_loses_no_accepted_delivery_sqlite(server_factory, tmp_path: Path) -> None:
    """A server killed with SIGKILL under load loses no accepted delivery: every 202 is in
    history and its run executes after restart (SQLite store)."""
    first = server_factory(extra_env=FAST_LEASE)
    act = make_trigger(first, tmp_path)
    accepted = _load([act["url_with_token"]], total=150, kill_after=60, kill=first.kill)
    restarted = server_factory(token=first.token, extra_env=FAST_LEASE)
    _all_ran(restarted, accepted)


def test_two_processes_one_postgres_duplicates_start_one_run(
    server_factory, tmp_path: Path, pg_url: str
) -> None:
    """Two server processes on one PostgreSQL database: copies of one delivery arriving at the
    same moment on both start exactly one run; rotation and disabling on one hold on the other."""
    env = {"DATABASE_URL": pg_url}
    a = server_factory(extra_env=env)
    b = server_factory(token=a.token, extra_env=env)
    act = make_trigger(a, tmp_path)
    url_b = act["url_with_token"].replace(a.url, b.url)

    async def burst() -> list[dict]:
        # 30 s per request as the other bursts here (httpx's default 5 s is too short on a loaded machine)
        async with httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=40)) as client:
            rs = await asyncio.gather(
                *(
                    client.post(url, content=b"same", headers={"Idempotency-Key": "one"})
                    for url in [act["url_with_token"], url_b] * 15
                )
            )
        return [r.json() for r in rs]

    answers = asyncio.run(burst())
    assert sum(1 for x in answers if x["status"] == "accepted") == 1
    until(lambda: all(d["outcome"] != "queued" for d in history(b)), what="the run to start")
    assert len(history(b)) == 30 and sum(1 for d in history(a) if d["run"]) == 1
    rotated = a.cli_json("trigger", "rotate", "triage", "ci")
    assert httpx.post(url_b, content=b"old token").status_code == 404
    assert a.cli_json("trigger", "disable", "triage", "ci")["ok"]
    assert httpx.post(rotated["url_with_token"].replace(a.url, b.url), content=b"x").status_code == 409


def test_sigkill_one_of_two_postgres_processes_loses_nothing(
    server_factory, tmp_path: Path, pg_url: str
) -> None:
    """SIGKILL one of two server processes under load: every 202 (from either) is in history and
    its run executes; the survivor takes over the killed process's leased runs."""
    env = {"DATABASE_URL": pg_url, **FAST_LEASE}
    a = server_factory(extra_env=env)
    b = server_factory(token=a.token, extra_env=env)
    act = make_trigger(a, tmp_path)
    urls = [act["url_with_token"], act["url_with_token"].replace(a.url, b.url)]
    accepted = _load(urls, total=150, kill_after=60, kill=a.kill)
    _all_ran(b, accepted)


def test_deliveries_commit_durably_and_run_bookkeeping_need_not(tmp_path: Path) -> None:
    """Durable recording (docs/reference-webhooks.md#durability-and-processes): the recorder's SQLite
    connections commit with synchronous=FULL (each commit fsyncs the WAL before a 202); the run workers'
    bookkeeping uses NORMAL (a power loss can only make a run execute again, as after a crash)."""
    from engine.serverstore.store import open_engine

    url = f"sqlite:///{tmp_path / 'p.db'}"
    for kwargs, expected in (({}, 2), ({"synchronous": "NORMAL"}, 1)):
        engine = open_engine(url, **kwargs)
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == expected
        engine.dispose()
