"""The daemon's stream against doing the same thing directly
(docs/reference-daemon.md#benchmark-benchdaemonpy), same run:

1. Round trip: a no-op shell (`true`) through server -> gateway stream -> daemon -> back
   (POST /api/daemons/<name>/shell, keep-alive HTTP), against running `/bin/sh -c true` locally
   with subprocess. Aim: overhead (p50 stream - p50 local) under 5 ms.
2. Throughput: a file read through the daemon path (POST .../files/read: negotiated on the stream,
   the bytes on the bulk side channel, read by an http.client caller into a 1 MiB buffer) against
   a raw loopback TCP copy of the same file (sendall/recv_into, 1 MiB), alternated BENCH_REPEATS
   times (3); the median ratio is the figure. Aim >= 0.5x. Also shown: the same read with httpx,
   and the bare grpc.aio stream's own ceiling (what the in-stream fallback can reach). A file
   write the same way: POST .../files/write sent by http.client with Content-Length (1 MiB blocks:
   the same sendall as the raw copy's sender), the server splicing the body into the bulk side
   channel, the daemon writing (O_DIRECT on a block device), fsyncing and renaming the file; alternated
   with the raw copy. Beside it: the commit rule alone (the file written as the daemon writes it and
   fsync'd, no network), the same through the page cache, and the upload into a tmpfs root.
3. 100 concurrent round trips through the stream: p99, against 100 concurrent local subprocesses.

A real `platform server` (SQLite) and a real `platform daemon start` (own HOME); the login and
daemon tokens are minted into the store by the real `mint` before the server starts.

    python bench/daemon.py     # BENCH_TRIPS=200 BENCH_MIB=256 BENCH_REPEATS=3
    BENCH_SMOKE=1: 5 trips, 2 MiB (still the bulk channel and the splice), one repeat, 10 concurrent
    (tests/test_bench_smoke.py)
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SMOKE = os.environ.get("BENCH_SMOKE") == "1"  # tiny sizes, one round, no aim (tests/test_bench_smoke.py)
TRIPS = int(os.environ.get("BENCH_TRIPS", "5" if SMOKE else "200"))
MIB = int(os.environ.get("BENCH_MIB", "2" if SMOKE else "256"))
REPEATS = int(os.environ.get("BENCH_REPEATS", "1" if SMOKE else "3"))
CONCURRENT = 10 if SMOKE else 100


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def prepare(tmp: Path) -> tuple[str, str]:
    from engine.auth.accounts import add_org, add_user
    from engine.auth.tokens import mint
    from engine.serverstore import store
    from engine.serverstore.migrations import up
    from engine.serverstore.url import database_url

    data = tmp / "data"
    data.mkdir()
    engine = store.open_engine(database_url(data))
    up(engine)
    org = add_org(engine, "bench")
    user = add_user(engine, "bench@example.com", "bench password", "bench")
    with store.write(engine) as conn:
        login = mint(conn, kind="access", org_id=org.id, user_id=user.id, scope="platform:api", ttl_s=3600).token
        daemon = mint(conn, kind="daemon", org_id=org.id, user_id=user.id, scope="platform:daemon", ttl_s=3600,
                      name="daemon@bench").token
    engine.dispose()
    return login, daemon


Procs = tuple[subprocess.Popen[str], subprocess.Popen[str], str]


def start(tmp: Path, env: dict[str, str], daemon_token: str, memory: Path) -> Procs:
    server = subprocess.Popen([sys.executable, "-m", "app.main", "platform", "server", "--port", "0",
                               "--gateway-port", "0", "--data-dir", str(tmp / "data"), "--workers", "0"],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = gateway = ""
    assert server.stdout is not None
    while not (url and gateway):
        line = server.stdout.readline()
        if not line:
            raise SystemExit("server did not start")
        if line.startswith("platform server listening on "):
            url = line.rsplit(" ", 1)[1].strip()
        if line.startswith("daemon gateway listening on "):
            gateway = line.rsplit(" ", 1)[1].strip()
    def drain() -> None:  # the server's output, echoed with BENCH_SERVER_LOG=1
        for line in server.stdout:  # type: ignore[union-attr]
            if os.environ.get("BENCH_SERVER_LOG"):
                sys.stderr.write("server: " + line)

    threading.Thread(target=drain, daemon=True).start()
    from engine.daemon import credentials

    instance = Path(env["HOME"]) / ".platform" / "instances" / "bench"
    credentials.save(instance, credentials.DaemonCredentials(server=url, gateway=gateway, name="bench",
                                                             token=daemon_token))
    (tmp / "work").mkdir()
    daemon = subprocess.Popen([sys.executable, "-m", "app.main", "platform", "daemon", "start", "--name", "bench",
                               "--root", str(tmp / "work"), "--root", str(memory)], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            record = json.loads((instance / "runtime.json").read_text())
            if record.get("state") == "connected":
                return server, daemon, url
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    raise SystemExit("daemon did not connect")


def round_trips(url: str, token: str) -> tuple[float, float]:
    import httpx

    with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
        stream = []
        for i in range(TRIPS + 10):
            t = time.perf_counter()
            r = client.post(f"{url}/api/daemons/bench/shell", json={"command": "true"})
            assert r.status_code == 200 and r.json()["exit_code"] == 0, r.text
            if i >= 10:
                stream.append(time.perf_counter() - t)
    local = []
    for _ in range(TRIPS):
        t = time.perf_counter()
        subprocess.run(["/bin/sh", "-c", "true"], check=True)
        local.append(time.perf_counter() - t)
    return statistics.median(stream) * 1000, statistics.median(local) * 1000


def http_read(url: str, token: str, size: int) -> float:
    """MiB/s of POST .../files/read, read with http.client into a 1 MiB buffer (a client that does
    not itself cap the figure: httpx reads 64 KiB at a time, see `httpx_read`)."""
    import http.client
    from urllib.parse import urlsplit

    where = urlsplit(url)
    conn = http.client.HTTPConnection(where.hostname, where.port, timeout=120)
    buf = bytearray(1 << 20)
    t = time.perf_counter()
    conn.request("POST", "/api/daemons/bench/files/read", body=json.dumps({"path": "blob.bin"}),
                 headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    r = conn.getresponse()
    assert r.status == 200, r.read()
    got = 0
    while n := r.readinto(buf):
        got += n
    rate = size / (time.perf_counter() - t) / (1 << 20)
    conn.close()
    assert got == size, got
    return rate


def http_write(url: str, token: str, path: Path, size: int, target: Path) -> float:
    """MiB/s of POST .../files/write of the file to `target` (http.client, 1 MiB blocks, Content-Length)."""
    import http.client
    from urllib.parse import urlsplit

    where = urlsplit(url)
    conn = http.client.HTTPConnection(where.hostname, where.port, timeout=120, blocksize=1 << 20)
    t = time.perf_counter()
    with open(path, "rb") as fh:
        conn.request("POST", f"/api/daemons/bench/files/write?path={target}", body=fh,
                     headers={"Authorization": f"Bearer {token}", "Content-Length": str(size)})
        r = conn.getresponse()
        answer = json.loads(r.read())
    rate = size / (time.perf_counter() - t) / (1 << 20)
    conn.close()
    assert r.status == 200 and answer["size"] == size, answer
    return rate


def httpx_read(url: str, token: str, size: int) -> float:
    import httpx

    t = time.perf_counter()
    got = 0
    with httpx.stream("POST", f"{url}/api/daemons/bench/files/read", timeout=120, json={"path": "blob.bin"},
                      headers={"Authorization": f"Bearer {token}"}) as r:
        for chunk in r.iter_raw(1 << 20):
            got += len(chunk)
    assert got == size
    return size / (time.perf_counter() - t) / (1 << 20)


Pairs = list[tuple[float, float]]


def median_pair(pairs: Pairs) -> tuple[float, float, float]:
    """The (MiB/s, raw MiB/s, ratio) of the pair with the median ratio."""
    mbs, raw = sorted(pairs, key=lambda p: p[0] / p[1])[len(pairs) // 2]
    return mbs, raw, mbs / raw


def throughput(url: str, token: str, work: Path, memory: Path) -> tuple[Pairs, float, float, Pairs, Pairs, Pairs,
                                                                      Pairs, list[str]]:
    path = work / "blob.bin"
    with open(path, "wb") as fh:
        block = os.urandom(1 << 20)
        for _ in range(MIB):
            fh.write(block)
    size = MIB << 20
    http_read(url, token, size)  # warm: the page cache, the connection paths
    pairs = [(http_read(url, token, size), raw_copy(path, size)) for _ in range(REPEATS)]
    with_httpx = httpx_read(url, token, size)
    relay = statistics.median(relay_ceiling(path, size) for _ in range(REPEATS))
    uploads, ways = [], []
    for _ in range(REPEATS):
        ways.append(write_mode())  # the daemon's choice for the upload about to start (same machine, same rule)
        uploads.append((http_write(url, token, path, size, work / "upload.bin"), raw_copy(path, size)))
    disk = [(disk_alone(path, work / "disk-alone.bin", True), raw_copy(path, size)) for _ in range(REPEATS)]
    cached = [(disk_alone(path, work / "disk-alone.bin", False), raw_copy(path, size)) for _ in range(REPEATS)]
    in_memory = [(http_write(url, token, path, size, memory / "upload.bin"), raw_copy(path, size))
                 for _ in range(REPEATS)]
    path.unlink()
    (work / "upload.bin").unlink()
    (memory / "upload.bin").unlink()
    return pairs, with_httpx, relay, uploads, in_memory, disk, cached, ways


def write_mode() -> str:
    """How the daemon writes an upload to a block device now (engine.daemon.bulk.write_mode: its setting,
    else O_DIRECT while the cores are busy, the page cache while they are free), with the CPU pressure
    that chose it."""
    from engine.daemon.bulk import cpu_pressure
    from engine.daemon.bulk import write_mode as mode

    way = "O_DIRECT" if mode() == "direct" else "the page cache"
    try:
        with open("/proc/pressure/cpu") as fh:
            pressure = cpu_pressure(fh.read())
    except OSError:
        pressure = None
    return way if pressure is None else f"{way} (cpu some avg10 {pressure:.0f}%)"


def disk_alone(path: Path, target: Path, direct: bool) -> float:
    """MiB/s of what the upload's commit rule costs by itself: the file written into the same directory
    and fsync'd; no network, no server. `direct`: as the daemon writes on a block device (the same code,
    engine.daemon.bulk.write_direct: preallocated, O_DIRECT, 8 MiB writes from reused page-aligned buffers,
    several in flight, the tail through the page cache; falls back to the page cache where the file system
    refuses it); else through the page cache (1 MiB writes, engine.daemon.bulk.WriteBehind: writeback started
    every 8 MiB: the daemon's way on tmpfs and other file systems, and its only way before)."""
    from engine.daemon.bulk import WriteBehind, _direct, write_direct

    t = time.perf_counter()
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with open(path, "rb", buffering=0) as fh:
            written = 0
            if direct and _direct(fd):
                written = write_direct(fd, fh.readinto, lambda: None, os.fstat(fh.fileno()).st_size)
            else:
                behind = WriteBehind(fd)
                while data := fh.read(1 << 20):
                    os.write(fd, data)
                    written += len(data)
                    behind.wrote(written)
                behind.close()
        os.fsync(fd)
    finally:
        os.close(fd)
    rate = written / (time.perf_counter() - t) / (1 << 20)
    target.unlink()
    return rate


def raw_copy(path: Path, size: int) -> float:
    """MiB/s of the baseline: a raw loopback TCP copy of the file (sendall / recv_into, 1 MiB)."""
    listener = socket.create_server(("127.0.0.1", 0))

    def send() -> None:
        conn, _ = listener.accept()
        with conn, open(path, "rb") as fh:
            while data := fh.read(1 << 20):
                conn.sendall(data)

    sender = threading.Thread(target=send)
    sender.start()
    buf = bytearray(1 << 20)
    t = time.perf_counter()
    got = 0
    with socket.create_connection(listener.getsockname()) as sock:
        while n := sock.recv_into(buf):
            got += n
    raw = size / (time.perf_counter() - t) / (1 << 20)
    sender.join()
    listener.close()
    assert got == size
    return raw


def relay_ceiling(path: Path, size: int) -> float:
    """MiB/s of the side channel's topology with no Python in the data path: a sender process
    (os.sendfile) -> loopback -> a splice relay (engine.server.splice.pump) -> loopback -> a
    recv_into reader. Two TCP hops instead of the raw copy's one: the bound of any relay here."""
    from engine.server.splice import pump

    into, out = socket.create_server(("127.0.0.1", 0)), socket.create_server(("127.0.0.1", 0))
    code = ("import os, socket, sys\ns = socket.create_connection(('127.0.0.1', int(sys.argv[1])))\n"
            "fd, sent = os.open(sys.argv[2], os.O_RDONLY), 0\n"
            "while sent < int(sys.argv[3]):\n    sent += os.sendfile(s.fileno(), fd, sent, int(sys.argv[3]) - sent)\n")
    sender = subprocess.Popen([sys.executable, "-c", code, str(into.getsockname()[1]), str(path), str(size)])
    src, _ = into.accept()
    reader = socket.create_connection(out.getsockname())
    dst, _ = out.accept()
    result: dict[str, float] = {}

    def read() -> None:
        buf, got = bytearray(1 << 20), 0
        t = time.perf_counter()
        while n := reader.recv_into(buf):
            got += n
        result["rate"] = got / (time.perf_counter() - t) / (1 << 20)

    thread = threading.Thread(target=read)
    thread.start()
    pump(src.fileno(), dst.fileno(), size, threading.Event())
    dst.close()
    thread.join()
    sender.wait()
    for sock in (src, reader, into, out):
        sock.close()
    return result["rate"]


def grpc_ceiling() -> float:
    """MiB/s of the bare transport: 1 MiB Frames on one grpc.aio stream over loopback, no daemon,
    no HTTP (what any design on grpcio's Python stream can reach on this machine)."""
    import grpc

    from engine.daemon import proto

    async def run() -> float:
        done = asyncio.Event()

        async def handler(requests: object, context: grpc.aio.ServicerContext) -> None:  # type: ignore[type-arg]
            while await context.read() is not grpc.aio.EOF:
                pass
            done.set()

        server = grpc.aio.server(options=[("grpc.max_receive_message_length", 8 << 20)])
        h = grpc.stream_stream_rpc_method_handler(handler, request_deserializer=proto.deserialize,
                                                  response_serializer=proto.serialize)
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("platform.daemon.v1.Gateway",
                                                                               {"Connect": h}),))
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        call = channel.stream_stream(proto.METHOD, request_serializer=proto.serialize,
                                     response_deserializer=proto.deserialize)()
        data = os.urandom(1 << 20)
        t = time.perf_counter()
        for _ in range(MIB):
            await call.write(proto.Frame(request=1, output=proto.pb().Output(stream="file", data=data)))
        await call.done_writing()
        await done.wait()
        rate = MIB / (time.perf_counter() - t)
        await channel.close()
        await server.stop(0)
        return rate

    return asyncio.run(run())


def concurrent(url: str, token: str) -> tuple[float, float]:
    import httpx

    async def via_stream() -> list[float]:
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60,
                                     limits=httpx.Limits(max_connections=100)) as client:
            async def one() -> float:
                t = time.perf_counter()
                r = await client.post(f"{url}/api/daemons/bench/shell", json={"command": "true"})
                assert r.status_code == 200
                return time.perf_counter() - t

            return list(await asyncio.gather(*(one() for _ in range(CONCURRENT))))

    async def local() -> list[float]:
        async def one() -> float:
            t = time.perf_counter()
            proc = await asyncio.create_subprocess_exec("/bin/sh", "-c", "true")
            await proc.wait()
            return time.perf_counter() - t

        return list(await asyncio.gather(*(one() for _ in range(CONCURRENT))))

    asyncio.run(via_stream())  # warm the connections
    return pct(asyncio.run(via_stream()), 0.99) * 1000, pct(asyncio.run(local()), 0.99) * 1000


def main() -> int:
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else None  # tmpfs: an upload with no disk under it
    with tempfile.TemporaryDirectory(prefix="bench-daemon-") as name, \
            tempfile.TemporaryDirectory(prefix="bench-daemon-", dir=shm) as in_memory:
        tmp = Path(name)
        env = {**os.environ, "HOME": str(tmp / "home"), "XDG_CACHE_HOME": str(tmp / "cache"),
               "GRPC_VERBOSITY": "NONE"}
        env.pop("DATABASE_URL", None)
        os.environ["XDG_CACHE_HOME"] = env["XDG_CACHE_HOME"]
        login, daemon_token = prepare(tmp)
        server, daemon, url = start(tmp, env, daemon_token, Path(in_memory))
        try:
            one, five, fifteen = os.getloadavg()
            print(f"load average {one:.2f} {five:.2f} {fifteen:.2f} (other jobs on this machine move every ratio)")
            stream_ms, local_ms = round_trips(url, login)
            over = stream_ms - local_ms
            print(f"no-op shell round trip p50: stream {stream_ms:.2f} ms, local subprocess {local_ms:.2f} ms; "
                  f"overhead {over:.2f} ms (aim < 5 ms: {'met' if over < 5 else 'NOT met'})")
            pairs, with_httpx, relay, uploads, to_memory, disk, cached, ways = throughput(url, login, tmp / "work",
                                                                                          Path(in_memory))
            mbs, raw, ratio = median_pair(pairs)
            print(f"file read {MIB} MiB (bulk side channel): {mbs:.0f} MiB/s, raw loopback TCP {raw:.0f} MiB/s; "
                  f"{ratio:.2f}x, median of {len(pairs)} (each: "
                  + ", ".join(f"{m:.0f}/{r:.0f}={m / r:.2f}x" for m, r in pairs)
                  + f"); aim >= 0.5x: {'met' if ratio >= 0.5 else 'NOT met'}")
            print(f"  the same read with an httpx client (iter_raw, 1 MiB): {with_httpx:.0f} MiB/s "
                  f"({with_httpx / raw:.2f}x): httpx's own 64 KiB reads cap it")
            print(f"  a bare two-hop relay (sendfile -> splice -> recv_into, no Python in the data path): "
                  f"{relay:.0f} MiB/s ({relay / raw:.2f}x, median of {REPEATS}): the side channel's topology alone;"
                  f" the daemon path: {mbs / relay:.2f}x of it")
            up, up_raw, up_ratio = median_pair(uploads)
            print(f"file write {MIB} MiB (upload with Content-Length, spliced into the bulk side channel, fsync'd by "
                  f"the daemon): {up:.0f} MiB/s, raw loopback TCP {up_raw:.0f} MiB/s; {up_ratio:.2f}x, median of "
                  f"{len(uploads)} (each: " + ", ".join(f"{m:.0f}/{r:.0f}={m / r:.2f}x" for m, r in uploads)
                  + f"); aim >= 0.5x: {'met' if up_ratio >= 0.5 else 'NOT met'}; written through: "
                  + ", ".join(ways))
            alone, alone_raw, alone_ratio = median_pair(disk)
            print(f"  the commit rule's own ceiling: {MIB} MiB written and fsync'd in the same directory as the daemon "
                  f"writes it with O_DIRECT (its way on a block device while the cores are busy), no network: "
                  f"{alone:.0f} MiB/s, raw {alone_raw:.0f} MiB/s; "
                  f"{alone_ratio:.2f}x, median of {len(disk)} (each: "
                  + ", ".join(f"{m:.0f}/{r:.0f}={m / r:.2f}x" for m, r in disk) + "); the upload: "
                  f"{up_ratio / alone_ratio:.2f}x of it")
            alone, alone_raw, alone_ratio = median_pair(cached)
            print(f"  the same through the page cache (write-behind in a thread beside the writer: writeback started "
                  f"every 8 MiB, at most 64 MiB unwritten: the daemon's way while the cores are free, on tmpfs and "
                  f"where O_DIRECT is refused): "
                  f"{alone:.0f} MiB/s, raw {alone_raw:.0f} MiB/s; {alone_ratio:.2f}x, "
                  f"median of {len(cached)} (each: " + ", ".join(f"{m:.0f}/{r:.0f}={m / r:.2f}x" for m, r in cached)
                  + ")")
            up, up_raw, up_ratio = median_pair(to_memory)
            print(f"  the same upload into a tmpfs root ({shm or 'no /dev/shm: the temp dir'}; no disk under it, "
                  f"the transfer path's own figure): {up:.0f} MiB/s, raw {up_raw:.0f} MiB/s; {up_ratio:.2f}x, median"
                  f" of {len(to_memory)} (each: " + ", ".join(f"{m:.0f}/{r:.0f}={m / r:.2f}x" for m, r in to_memory)
                  + f"); aim >= 0.5x: {'met' if up_ratio >= 0.5 else 'NOT met'}")
            ceiling = grpc_ceiling()
            print(f"  the bare grpc.aio stream alone (1 MiB frames, loopback, no daemon, no HTTP): {ceiling:.0f} MiB/s"
                  f" ({ceiling / raw:.2f}x): the in-stream path's ceiling")
            p99, local99 = concurrent(url, login)
            print(f"{CONCURRENT} concurrent round trips p99: stream {p99:.1f} ms, {CONCURRENT} concurrent local "
                  "subprocesses "
                  f"{local99:.1f} ms ({p99 / local99:.2f}x)")
        finally:
            for proc in (daemon, server):
                proc.terminate()
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
