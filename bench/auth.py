"""Cost of authentication on an API call (docs/reference-auth.md): requests/s of GET /api/automations
through the server's real `api()` wrapper and its one token verifier (engine.auth.tokens), against
the same handler with authentication disabled, measured in the same run. Aim: >= 0.9x.

One harness process serves three routes over the same SQLite store (migrated, an access token
minted by the real `mint`), on uvicorn + uvloop + the server's HTTP protocol, as `platform
server` does:
  /open/automations         the same handler, no authentication          (baseline)
  /api/automations          bearer token -> Verifier (1 s cache)           (subject)
  /nocache/api/automations  bearer token -> Verifier with no cache         (what the cache buys)
A separate load process (raw HTTP/1.1 on uvloop, keep-alive connections) drives each route for
BENCH_SECONDS; rounds interleave the routes (machine load hits all alike); medians are reported.

    python bench/auth.py        # BENCH_ROUNDS=3 BENCH_SECONDS=5 BENCH_CONNECTIONS=20
    BENCH_SMOKE=1: one round of 0.5 s, 4 connections (tests/test_bench_smoke.py)
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SMOKE = os.environ.get("BENCH_SMOKE") == "1"  # tiny sizes, one round, no aim (tests/test_bench_smoke.py)
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "1" if SMOKE else "3"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "0.5" if SMOKE else "5"))
CONNECTIONS = int(os.environ.get("BENCH_CONNECTIONS", "4" if SMOKE else "20"))
AIM = 0.9

HARNESS = """
import socket, sys
from pathlib import Path
from types import SimpleNamespace

import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route

from engine.auth.accounts import add_org, add_user
from engine.auth.tokens import Verifier, mint
from engine.serverstore import store
from engine.serverstore.migrations import up
from engine.hooks import automations as svc
from engine.server.app import _list, api
from engine.server.http_protocol import GatheringHttpProtocol

engine = store.open_engine("sqlite:///" + str(Path(sys.argv[1]) / "bench.db"))
up(engine)
org = add_org(engine, "bench")
user = add_user(engine, "bench@example.com", "bench password", "bench")
with store.write(engine) as conn:
    token = mint(conn, kind="access", org_id=org.id, user_id=user.id, scope="platform:api", ttl_s=3600).token
state = SimpleNamespace(engine=engine)


async def open_list(request):
    result = await run_in_threadpool(_list, state, request, {})
    return JSONResponse(result.model_dump(mode="json"))


def app_with(verifier):
    app = Starlette(routes=[Route("/api/automations", api(_list), methods=["GET"]),
                            Route("/open/automations", open_list, methods=["GET"])])
    app.state.server = state
    app.state.verifier = verifier
    return app


root = app_with(Verifier(engine))
root.router.routes.append(Mount("/nocache", app=app_with(Verifier(engine, ttl_s=0))))
sock = socket.socket()
sock.bind(("127.0.0.1", 0))
sock.listen(1024)
print(f"READY {sock.getsockname()[1]} {token}", flush=True)
server = uvicorn.Server(uvicorn.Config(root, loop="uvloop", http=GatheringHttpProtocol, access_log=False,
                                       log_level="warning", lifespan="off"))
server.run(sockets=[sock])
"""


async def _connection(port: int, path: str, token: str, deadline: float, counts: dict[int, int]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}\r\n".encode()
    while time.perf_counter() < deadline:
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), 0)
        if length:
            await reader.readexactly(length)
        counts[status] = counts.get(status, 0) + 1
    writer.close()


def load(port: int, path: str, token: str) -> dict[str, float]:
    """Run in a child process: `python bench/auth.py --load PORT PATH TOKEN`."""
    import uvloop

    counts: dict[int, int] = {}

    async def main() -> float:
        start = time.perf_counter()
        deadline = start + SECONDS
        await asyncio.gather(*(_connection(port, path, token, deadline, counts) for _ in range(CONNECTIONS)))
        return time.perf_counter() - start

    elapsed = uvloop.run(main())
    return {"rps": counts.get(200, 0) / elapsed, "non_200": sum(v for k, v in counts.items() if k != 200)}


def _measure(port: int, path: str, token: str) -> float:
    out = subprocess.run([sys.executable, __file__, "--load", str(port), path, token], capture_output=True,
                         text=True, check=True)
    doc = json.loads(out.stdout)
    if doc["non_200"]:
        raise SystemExit(f"{path}: {doc['non_200']} requests were not answered 200")
    return float(doc["rps"])


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        proc = subprocess.Popen([sys.executable, "-c", HARNESS, tmp], cwd=ROOT, env=env, text=True,
                                stdout=subprocess.PIPE)
        try:
            assert proc.stdout is not None
            ready = proc.stdout.readline().split()
            if not ready or ready[0] != "READY":
                raise SystemExit("the harness did not start")
            port, token = int(ready[1]), ready[2]
            routes = {"no auth (baseline)": ("/open/automations", ""),
                      "auth, 1 s cache": ("/api/automations", token),
                      "auth, no cache": ("/nocache/api/automations", token)}
            results: dict[str, list[float]] = {name: [] for name in routes}
            for _ in range(ROUNDS):
                for name, (path, bearer) in routes.items():
                    results[name].append(_measure(port, path, bearer))
        finally:
            proc.terminate()
            proc.wait(30)
    medians = {name: statistics.median(values) for name, values in results.items()}
    base = medians["no auth (baseline)"]
    print(f"GET /api/automations, {CONNECTIONS} connections, {ROUNDS} x {SECONDS:g} s per route (medians)")
    for name, rps in medians.items():
        print(f"  {name:<20} {rps:9.0f} req/s   {rps / base:5.2f}x")
    ratio = medians["auth, 1 s cache"] / base
    print(f"authenticated / unauthenticated: {ratio:.2f}x (aim >= {AIM}x): {'met' if ratio >= AIM else 'NOT met'}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--load":
        print(json.dumps(load(int(sys.argv[2]), sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else "")))
        sys.exit(0)
    sys.exit(main())
