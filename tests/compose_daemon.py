"""A real Docker daemon and a local image registry for the compose runtime's tests and bench/compose.py
(docs/reference-cluster.md#compose-target): Debian's dockerd with its own data root, exec root, socket,
pid file and bridge (created here, with a private address pool, no iptables rules), Debian's
docker-registry on 127.0.0.1, and a `FROM scratch` image holding Debian's static busybox (its httpd
serves, its sh and wget run the rendered health check) built and pushed there. `stop()` removes every
container, both daemons' processes, the bridges and the directories, also after a failed start.

Import with: sys.path.insert(0, str(Path(__file__).parent)); from compose_daemon import ...
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

TOOLS = {"dockerd": "docker.io", "docker": "docker.io", "docker-compose": "docker-compose",
         "docker-registry": "docker-registry", "busybox": "busybox-static"}


def missing_tools() -> list[str]:
    """The Debian packages (`make system-deps`) whose command is not on PATH."""
    return sorted({pkg for cmd, pkg in TOOLS.items() if shutil.which(cmd) is None})


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(check, what: str, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not come up within {timeout:g}s")
        time.sleep(0.1)


def _subnet_taken(prefix: str) -> bool:
    out = subprocess.run(["ip", "-o", "addr"], capture_output=True, text=True).stdout
    routes = subprocess.run(["ip", "route"], capture_output=True, text=True).stdout
    return prefix in out or prefix in routes


class TestDaemon:
    """dockerd + docker-registry under `root` (module docstring)."""

    __test__ = False

    def __init__(self, root: Path) -> None:
        self.root = root
        self.sock = root / "docker.sock"
        self.bridge = f"fwc{os.getpid() % 100000}{random.randint(0, 99)}"[:15]
        self.procs: list[subprocess.Popen[bytes]] = []
        self.registry_port = 0
        self.bridge_made = False

    def env(self) -> dict[str, str]:
        return {"DOCKER_HOST": f"unix://{self.sock}"}

    def docker(self, *args: str, check: bool = True, timeout: float = 120.0) -> str:
        out = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout,
                             env={**os.environ, **self.env()})
        if check and out.returncode != 0:
            raise RuntimeError(f"docker {' '.join(args)}: {out.stderr.strip()}")
        return out.stdout

    def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        for _ in range(20):  # a /24 of 10.213.0.0/16 no interface or route uses: the bridge and the pool
            third = random.randint(0, 126) * 2
            if not _subnet_taken(f"10.213.{third}.") and not _subnet_taken(f"10.213.{third + 1}."):
                break
        else:
            raise RuntimeError("no free 10.213.x.0/24 for the test bridge")
        subprocess.run(["ip", "link", "add", "name", self.bridge, "type", "bridge"], check=True)
        self.bridge_made = True
        subprocess.run(["ip", "addr", "add", f"10.213.{third}.1/24", "dev", self.bridge], check=True)
        subprocess.run(["ip", "link", "set", self.bridge, "up"], check=True)
        log = open(self.root / "dockerd.log", "wb")  # noqa: SIM115 - held by the process
        self.procs.append(subprocess.Popen(
            ["dockerd", "--data-root", str(self.root / "data"), "--exec-root", str(self.root / "exec"),
             "-H", f"unix://{self.sock}", "--pidfile", str(self.root / "docker.pid"), "--bridge", self.bridge,
             "--iptables=false", "--ip6tables=false", "--ip-masq=false",
             "--default-address-pool", f"base=10.213.{third + 1}.0/24,size=28"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True))
        _wait(lambda: self.sock.exists() and self.docker("info", check=False, timeout=10) != "", "dockerd")
        self.registry_port = _free_port()
        conf = self.root / "registry.yml"
        conf.write_text(f"version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: {self.root / 'registry'}\n"
                        f"http:\n  addr: 127.0.0.1:{self.registry_port}\n")
        self.procs.append(subprocess.Popen(["docker-registry", "serve", str(conf)], stdout=subprocess.DEVNULL,
                                           stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                                           start_new_session=True))
        _wait(self._registry_up, "docker-registry")

    def _registry_up(self) -> bool:
        import urllib.request

        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.registry_port}/v2/", timeout=2) as r:
                return bool(r.status == 200)
        except OSError:
            return False

    def build_and_push(self, repo: str, tag: str, marker: str = "1") -> tuple[str, str]:
        """Build the busybox image (its /www/version says `marker`), push it as
        127.0.0.1:<port>/<repo>:<tag>, drop it from the daemon (a deploy pulls it): (reference, digest)."""
        ctx = self.root / f"ctx-{marker}"
        (ctx / "bin").mkdir(parents=True, exist_ok=True)
        (ctx / "www").mkdir(exist_ok=True)
        shutil.copy("/bin/busybox", ctx / "bin" / "busybox")
        for applet in ("sh", "wget", "httpd"):
            if not (ctx / "bin" / applet).is_symlink():
                (ctx / "bin" / applet).symlink_to("busybox")
        (ctx / "www" / "healthz").write_text("ok\n")
        (ctx / "www" / "version").write_text(marker + "\n")
        (ctx / "Dockerfile").write_text("FROM scratch\nCOPY bin /bin\nCOPY www /www\n")
        ref = f"127.0.0.1:{self.registry_port}/{repo}"
        self.docker("build", "-q", "-t", f"{ref}:{tag}", str(ctx))
        self.docker("push", f"{ref}:{tag}")
        digest = json.loads(self.docker("image", "inspect", "--format", "{{json .RepoDigests}}", f"{ref}:{tag}"))[0]
        self.docker("rmi", f"{ref}:{tag}")
        return ref, digest.rsplit("@", 1)[1]

    def stop(self) -> None:
        """Remove every container, stop both daemons, delete the bridges and the directories."""
        if self.sock.exists():
            ids = self.docker("ps", "-aq", check=False, timeout=30).split()
            if ids:
                self.docker("rm", "-f", *ids, check=False, timeout=60)
            self.docker("network", "prune", "-f", check=False, timeout=60)  # their br-* interfaces
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=10)
        self.procs.clear()
        for line in reversed(Path("/proc/mounts").read_text().splitlines()):  # what dockerd left mounted
            where = line.split()[1]
            if where.startswith(str(self.root) + "/"):
                subprocess.run(["umount", "-l", where], capture_output=True)
        links = subprocess.run(["ip", "-o", "link", "show", "type", "bridge"], capture_output=True, text=True).stdout
        if self.bridge_made and self.bridge in links:
            subprocess.run(["ip", "link", "del", self.bridge], capture_output=True)
        self.bridge_made = False
        shutil.rmtree(self.root, ignore_errors=True)

    def leftovers(self) -> list[str]:
        """Processes still naming this daemon's directories, and its bridge if still there."""
        left = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if str(self.root) in cmd and Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z":
                left.append(f"{pid} {cmd.strip()}")
        if self.bridge in subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout:
            left.append(f"bridge {self.bridge}")
        return left
