"""Webhook ingestion throughput and p99 latency (docs/reference-webhooks.md#benchmark).

Baseline, measured in the same run on the same stack (uvicorn + uvloop + httptools, one
process): a bare Starlette endpoint that answers 202. The same endpoint is also measured with the
server's own HTTP protocol (engine/server/http_protocol.py: one write per response instead of
uvicorn's two), so that what that protocol alone buys is visible. Reference, for orientation: the
naive design, the same endpoint with one inline SQLite insert + commit per request (WAL,
synchronous=FULL). Subject: `platform server` accepting real deliveries (token in path, distinct
X-Delivery-Id, durable group-committed recording into SQLite with synchronous=FULL by its
recorder process) with `--workers 0`, so that the figure is ingestion alone; a last line runs
the default worker pool executing every run alongside. Load: 50 keep-alive connections for
~10 s from a separate process: wrk when installed (BENCH_CLIENT=wrk), else a raw HTTP/1.1
client on uvloop (BENCH_CLIENT=python). Rounds interleave them (machine
load changes hit all alike); medians are reported. Server CPU counts the server's children.
Aim: >= 0.9x the same-protocol baseline's throughput and p99 under 10 ms. A last line measures what
the durability guarantee alone allows on this disk at this moment: the p50 of a durable SQLite commit
(each connection waits for one per delivery), as a ceiling in deliveries per second.

    python bench/webhooks.py            # BENCH_ROUNDS=3 BENCH_SECONDS=10 BENCH_CONNECTIONS=50
                                        # BENCH_CLIENT=wrk|python
    BENCH_SMOKE=1: one round, 10 connections, each wrk load stopped after 1,000 answers (tests/test_bench_smoke.py)
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SMOKE = os.environ.get("BENCH_SMOKE") == "1"  # tiny sizes, one round, no aim (tests/test_bench_smoke.py)
CONNECTIONS = int(os.environ.get("BENCH_CONNECTIONS", "10" if SMOKE else "50"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "1" if SMOKE else "10"))
# The load generator: wrk (C, one thread) when installed (`make bench` installs it), else the
# Python one below. On 2 CPUs the Python client takes a third to half of a CPU itself, which
# caps what any server under test can show; wrk takes a few percent.
CLIENT = os.environ.get("BENCH_CLIENT") or ("wrk" if shutil.which("wrk") else "python")
WRK_SCRIPT = """
local counter = 0
local id = tostring(math.random(1, 1000000000))
request = function()
  counter = counter + 1
  local body = '{"ref": "main", "n": ' .. counter .. '}'
  return wrk.format("POST", nil, {["Content-Type"] = "application/json",
                                  ["X-Delivery-Id"] = id .. "-" .. counter}, body)
end
done = function(summary, latency, requests)
  io.write(string.format('{"requests": %d, "non_2xx": %d, "p50_ms": %.3f, "p99_ms": %.3f, "seconds": %.3f}\\n',
    summary.requests, summary.errors.status + summary.errors.connect + summary.errors.read
      + summary.errors.write + summary.errors.timeout,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, summary.duration / 1e6))
end
"""

BARE_APP = """
import sys, socket, uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
async def hook(request):
    await request.body()
    return JSONResponse({"status": "accepted"}, status_code=202)
app = Starlette(routes=[Route("/hooks/{trigger_id}/{token}", hook, methods=["POST"])])
sock = socket.socket(); sock.bind(("127.0.0.1", 0)); sock.listen(2048)
print(f"listening on http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
uvicorn.Server(uvicorn.Config(app, loop="uvloop", http="httptools", access_log=False,
                              log_level="warning")).run(sockets=[sock])
"""

# The reference design, for orientation: the same endpoint recording each request with
# one inline SQLite insert and commit (WAL, synchronous=FULL) on the event loop.
INLINE_APP = BARE_APP.replace(
    "async def hook(request):\n    await request.body()",
    """import sqlite3, os
db = sqlite3.connect(os.path.join(sys.argv[1], "inline.db"), isolation_level=None)
db.execute("PRAGMA journal_mode=WAL"); db.execute("PRAGMA synchronous=FULL")
db.execute("CREATE TABLE IF NOT EXISTS d (id INTEGER PRIMARY KEY, body BLOB, at INTEGER)")
async def hook(request):
    body = await request.body()
    db.execute("BEGIN IMMEDIATE"); db.execute("INSERT INTO d (body, at) VALUES (?, 0)", (body,))
    db.execute("COMMIT")""",
)
# The baseline again with the server's own HTTP protocol (one write per response,
# engine/server/http_protocol.py): how much of the subject's figure that protocol alone buys.
GATHERED_APP = BARE_APP.replace(
    'loop="uvloop", http="httptools"',
    'loop="uvloop", http=__import__("engine.server.http_protocol").server.http_protocol.GatheringHttpProtocol',
)
assert GATHERED_APP != BARE_APP
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "1" if SMOKE else "3"))  # the VM drifts: 3 medians hold better than 2


async def _connection(
    host: str,
    port: int,
    path: str,
    deadline: float,
    latencies: list[float],
    statuses: dict[int, int],
    worker: int,
) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    n = 0
    while time.perf_counter() < deadline:
        n += 1
        body = json.dumps({"ref": "main", "worker": worker, "n": n}).encode()
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
            f"X-Delivery-Id: {worker}-{n}-{time.time_ns()}\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        start = time.perf_counter()
        writer.write(head.encode() + body)
        headers = await reader.readuntil(b"\r\n\r\n")
        status = int(headers[9:12])
        length = 0
        for line in headers.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        if length:
            await reader.readexactly(length)
        latencies.append(time.perf_counter() - start)
        statuses[status] = statuses.get(status, 0) + 1
    writer.close()


def load(url: str) -> dict[str, float]:
    """Run in a child process: `python bench/webhooks.py --load URL`."""
    import uvloop

    rest = url.split("://", 1)[1]
    hostport, _, path = rest.partition("/")
    host, port = hostport.split(":")
    latencies: list[float] = []
    statuses: dict[int, int] = {}

    async def main() -> float:
        deadline = time.perf_counter() + SECONDS
        start = time.perf_counter()
        await asyncio.gather(
            *(
                _connection(host, int(port), "/" + path, deadline, latencies, statuses, w)
                for w in range(CONNECTIONS)
            )
        )
        return time.perf_counter() - start

    elapsed = uvloop.run(main())
    latencies.sort()
    ok = statuses.get(202, 0)
    return {
        "rps": ok / elapsed,
        "p50_ms": latencies[len(latencies) // 2] * 1000,
        "p99_ms": latencies[int(len(latencies) * 0.99)] * 1000,
        "requests": len(latencies),
        "non_202": sum(v for k, v in statuses.items() if k != 202),
    }


def _cpu_seconds(pid: int, children: bool = True) -> float:
    """User + system CPU of a server process and (unless told not to) its children (the delivery
    recorder): the machine-load-independent cost per request."""
    total = 0.0
    if children:
        for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
            total += _cpu_seconds(int(child))
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return total + (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# Smoke: wrk's thread stops after this many answers (its duration cannot be under 1 s): a load that proves the
# path answers, in a fraction of a second.
SMOKE_STOP = """
local answered = 0
response = function(status, headers, body)
  answered = answered + 1
  if answered >= 1000 then wrk.thread:stop() end
end
"""


def _wrk(url: str) -> dict[str, float]:
    """Every request of wrk's gets a distinct X-Delivery-Id; 2xx is 202 here (both endpoints)."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as script:
        script.write(WRK_SCRIPT + (SMOKE_STOP if SMOKE else ""))
        script.flush()
        out = subprocess.run(
            ["wrk", "-t1", f"-c{CONNECTIONS}", f"-d{SECONDS:g}s", "-s", script.name, url],
            capture_output=True,
            text=True,
            check=True,
        )
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    return {
        "rps": (doc["requests"] - doc["non_2xx"]) / doc["seconds"],
        "p50_ms": doc["p50_ms"],
        "p99_ms": doc["p99_ms"],
        "requests": doc["requests"],
        "non_202": doc["non_2xx"],
    }


def _measure(url: str, pid: int) -> dict[str, float]:
    """The load's figures, the server's CPU per request (all its processes), and of that the HTTP
    process's own: its share of one core over the load's wall time says whether it stalls (the
    bare endpoint keeps its one process near 100%)."""
    before, own_before, started = _cpu_seconds(pid), _cpu_seconds(pid, children=False), time.monotonic()
    if CLIENT == "wrk":
        result = _wrk(url)
    else:
        out = subprocess.run([sys.executable, __file__, "--load", url], capture_output=True, text=True, check=True)
        result = json.loads(out.stdout)
    wall = time.monotonic() - started
    own = _cpu_seconds(pid, children=False) - own_before
    result["cpu_us_per_request"] = (_cpu_seconds(pid) - before) / max(result["requests"], 1) * 1e6
    result["http_cpu_us_per_request"] = own / max(result["requests"], 1) * 1e6
    result["http_busy"] = own / wall
    return result


def _start(cmd: list[str], env: dict[str, str]) -> tuple[subprocess.Popen[str], str, str | None]:
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    token = None
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("admin API token"):
            token = line.split()[-1]
        if "listening on " in line:
            return proc, line.split()[-1], token
    raise SystemExit("server did not start")


def _subject(tmp: Path, workers: int) -> tuple[subprocess.Popen[str], str]:
    import httpx

    tmp.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "HOME": str(tmp), "PLATFORM_DATA_DIR": str(tmp / f"data-{workers}")}
    env.pop("DATABASE_URL", None)
    proc, url, token = _start(
        [sys.executable, "-m", "app.main", "platform", "server", "--port", "0", "--workers", str(workers)],
        env,
    )
    auth = {"Authorization": f"Bearer {token}"}
    workflow = (
        "name: bench\nmodel:\n  provider: scripted\n  steps:\n"
        '    - message: "ref={{trigger.payload.body.ref}}"\n'
    )
    # A machine shared with other jobs can take longer than httpx's default 5 s to answer.
    client = httpx.Client(headers=auth, timeout=60)
    client.post(f"{url}/api/automations", json={"name": "bench", "workflow": workflow}).raise_for_status()
    client.post(f"{url}/api/automations/bench/triggers", json={"definition": {"name": "hook"}}).raise_for_status()
    act = client.post(f"{url}/api/automations/bench/triggers/hook/activate", json={})
    client.close()
    act.raise_for_status()
    return proc, act.json()["url_with_token"]


def _bare(code: str, extra: list[str]) -> dict[str, float]:
    proc, url, _ = _start([sys.executable, "-c", code, *extra], dict(os.environ))
    try:
        return _measure(f"{url}/hooks/trg_0000000000000000/whk_token", proc.pid)
    finally:
        proc.terminate()
        proc.wait()


def _commit_latency(tmp: Path) -> dict[str, float]:
    """The durability guarantee's own price on this disk, now: a write transaction committed with
    synchronous=FULL in WAL mode (what every group commit pays before its 202s leave), timed back to back
    for a while. Each connection waits for one such commit per delivery, so CONNECTIONS / p50 bounds what
    any durable design can accept, whatever its CPU."""
    import sqlite3

    db = sqlite3.connect(tmp / "commit-latency.db", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE IF NOT EXISTS d (id INTEGER PRIMARY KEY, body BLOB)")
    times: list[float] = []
    deadline = time.perf_counter() + (0.3 if SMOKE else 2.0)
    while time.perf_counter() < deadline:
        start = time.perf_counter()
        db.execute("BEGIN IMMEDIATE")
        db.execute("INSERT INTO d (body) VALUES (?)", (b"x" * 300,))
        db.execute("COMMIT")
        times.append(time.perf_counter() - start)
    db.close()
    times.sort()
    return {"p50_ms": times[len(times) // 2] * 1000, "p99_ms": times[int(len(times) * 0.99)] * 1000}


def _median(runs: list[dict[str, float]]) -> dict[str, float]:
    return {key: statistics.median(r[key] for r in runs) for key in runs[0]}


def _line(label: str, r: dict[str, float], unit: str = "req/s") -> str:
    return (
        f"{label:44s} {r['rps']:8.0f} {unit:10s} p50 {r['p50_ms']:6.1f} ms  p99 {r['p99_ms']:6.1f} ms  "
        f"server CPU {r['cpu_us_per_request']:4.0f} us/request"
    )


def main() -> int:
    """Rounds interleave baseline, reference and subject, so that a change in machine load hits
    all three alike; medians over rounds are reported."""
    runs: dict[str, list[dict[str, float]]] = {"bare": [], "gathered": [], "inline": [], "subject": []}
    commits: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        for n in range(ROUNDS):
            runs["bare"].append(_bare(BARE_APP, []))
            runs["gathered"].append(_bare(GATHERED_APP, []))
            runs["inline"].append(_bare(INLINE_APP, [tmpdir]))
            commits.append(_commit_latency(tmp))
            proc, hook = _subject(tmp / f"round-{n}", 0)
            try:
                runs["subject"].append(_measure(hook, proc.pid))
            finally:
                proc.terminate()
                proc.wait()
        proc, hook = _subject(tmp / "workers", 2)
        try:
            with_workers = _measure(hook, proc.pid)
        finally:
            proc.terminate()
            proc.wait()
    bare, gathered, inline, subject = (_median(runs[k]) for k in ("bare", "gathered", "inline", "subject"))
    print(f"client={CLIENT} connections={CONNECTIONS} duration={SECONDS:g}s rounds={ROUNDS} (medians)")
    if SMOKE and CLIENT == "wrk":
        print("smoke: each load stopped after 1,000 answers, its rate counted over the whole second: not measures")
    print(_line("baseline: bare Starlette 202", bare))
    print(_line("bare Starlette 202, server's HTTP protocol", gathered) + f"  ({gathered['rps'] / bare['rps']:.2f}x)")
    reference = inline["rps"] / bare["rps"]
    print(_line("reference: inline SQLite commit per request", inline) + f"  ({reference:.2f}x)")
    print(_line("platform server --workers 0 (durable)", subject, "accepted/s") + f"  non-202 {subject['non_202']:.0f}")
    print(_line("platform server, 2 run workers (one run)", with_workers, "accepted/s"))
    ratio = subject["rps"] / bare["rps"]
    rounds = ", ".join(f"{s['rps'] / b['rps']:.2f}x" for s, b in zip(runs["subject"], runs["bare"], strict=True))
    print(
        f"ratio (durable ingestion / bare): {ratio:.2f}x throughput (rounds {rounds}), "
        f"p99 {subject['p99_ms']:.1f} ms (aim < 10 ms); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    same = subject["rps"] / gathered["rps"]
    print(f"against the baseline with the server's HTTP protocol too: {same:.2f}x (aim >= 0.9x)")
    print(
        f"the HTTP process alone: {subject['http_cpu_us_per_request']:.0f} us/request, busy "
        f"{subject['http_busy']:.0%} of a core (its children, the recorder: "
        f"{subject['cpu_us_per_request'] - subject['http_cpu_us_per_request']:.0f} us/request); "
        f"the same-protocol baseline's one process: {gathered['http_cpu_us_per_request']:.0f} us/request, "
        f"busy {gathered['http_busy']:.0%}"
    )
    commit = _median(commits)
    ceiling = CONNECTIONS / commit["p50_ms"] * 1000
    print(
        f"the guarantee's own ceiling: a durable SQLite commit (FULL, WAL) here takes p50 {commit['p50_ms']:.2f} ms, "
        f"p99 {commit['p99_ms']:.2f} ms; {CONNECTIONS} connections each waiting for one: at most {ceiling:.0f}/s "
        f"({ceiling / gathered['rps']:.2f}x of the same-protocol baseline), p99 at least the commit's"
    )
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--load":
        print(json.dumps(load(sys.argv[2])))
        sys.exit(0)
    sys.exit(main())
