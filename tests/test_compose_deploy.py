"""The compose runtime against a real Docker daemon (tests/compose_daemon.py: Debian's dockerd with its
own data root, socket and bridge, and a local docker-registry):
docs/reference-deploy.md#deploys-to-k8scluster-and-compose-targets and docs/reference-cluster.md#compose-target.
One daemon, one demo copy and one pushed image per module."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from compose_daemon import TestDaemon, missing_tools  # noqa: E402
from deploy_fixtures import Demo, make_demo  # noqa: E402

from engine.processes import free_port

KCL = """import framework

environment = framework.Environment {{
    name = "{env}"
    kind = "{kind}"
    target = framework.Compose {{project_name = "{project}"}}
    workloads = [
        framework.Workload {{
            name = "api"
            image = "{image}"
            run = ["sh", "-c", "trap 'exit 0' TERM; echo serving on {port}; httpd -f -p {port} -h /www & wait"]
            ports = [framework.Port {{port = {port}}}]
            health = framework.HealthCheck {{path = "/healthz", period_seconds = 1}}
        }}
    ]
}}
"""


class Box:
    def __init__(self, daemon: TestDaemon, demo: Demo, project: str, port: int, image: str, digest: str) -> None:
        self.daemon, self.demo, self.project, self.port = daemon, demo, project, port
        self.image, self.digest = image, digest

    def json(self, *args: str, **kw: Any) -> tuple[int, dict[str, Any]]:
        return self.demo.json(*args, **kw)

    def release(self, version: str, digest: str) -> None:
        """Record release `version` as a push would: the api image and its registry digest."""
        rel = {
            "version": version, "project": "demo", "created_at": time.time(),
            "provenance": {"tree": None, "commit": None, "branch": "main", "dirty": False},
            "artifacts": [{"workload": "api", "kind": "oci", "coordinate": f"{self.image}@{digest}", "digest": digest}],
            "images": {"api": {"kind": "oci", "coordinate": self.image, "digest": digest}},
        }
        path = self.demo.root / ".framework" / "releases" / f"{version}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(rel, indent=2))

    def containers(self) -> list[dict[str, Any]]:
        ids = self.daemon.docker("ps", "-aq", "--filter", f"label=com.docker.compose.project={self.project}").split()
        return json.loads(self.daemon.docker("inspect", *ids)) if ids else []

    def get(self, path: str) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as r:
            return str(r.read().decode())


@pytest.fixture(scope="module", name="box")
def box_fixture(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    missing = missing_tools()
    if missing:
        pytest.skip(f"the compose tests need Debian's {', '.join(missing)} (`make system-deps`)")
    daemon = TestDaemon(tmp_path_factory.mktemp("dockerd"))
    try:
        daemon.start()
        image, digest = daemon.build_and_push("demo/api", "v1", marker="v1")
        demo = make_demo(tmp_path_factory.mktemp("compose-demo"))
        demo.env.update(daemon.env())
        project, port = f"box{free_port()}", free_port()
        env_dir = demo.root / "deploy" / "kcl" / "box"
        env_dir.mkdir(parents=True)
        kcl = KCL.format(env="box", kind="self_managed", project=project, image=image, port=port)
        (env_dir / "main.k").write_text(kcl)
        yield Box(daemon, demo, project, port, image, digest)
    finally:
        daemon.stop()


def test_deploy_pulls_ups_and_waits_then_status_reads_the_containers(box):
    """docs/reference-deploy.md#deploys-to-k8scluster-and-compose-targets: `env deploy` of a Compose
    environment pulls the release's image (pinned by digest) from the registry, runs `up -d` with the real
    Compose and waits the service through the rollout phases to `ready` (exit 0); the promotion and the
    apply are in the ledger; `env status` reads the live container: image `match`, workload ready,
    healthy, exit 0."""
    box.release("v1", box.digest)
    code, doc = box.json("env", "deploy", "box", "v1", "--yes", "--timeout", "90")
    assert code == 0, doc
    assert doc["appended"] and doc["applied"] and doc["rollout"]["phase"] == "ready"
    res = {r["name"]: r for r in doc["rollout"]["resources"]}
    assert res["api"]["outcome"] == "ready" and res["api"]["kind"] == "ComposeService"
    assert res["api"]["ready_replicas"] == 1
    (c,) = box.containers()
    assert c["Config"]["Image"] == f"{box.image}@{box.digest}"  # pulled by digest, not by tag
    assert c["State"]["Health"]["Status"] == "healthy"
    assert box.get("/version").strip() == "v1"  # the real container answers on its declared port
    code, shown = box.json("ledger", "show", "box")
    assert [p["release"] for p in shown["promotions"]] == ["v1"]
    assert shown["applies"][0]["outcome"] == "ready"
    code, st = box.json("env", "status", "box")
    assert code == 0, st
    env = st["environments"][0]
    assert {i["name"]: i["state"] for i in env["images"]} == {"api": "match"}
    assert env["images"][0]["running_digest"] == box.digest
    assert {w["name"]: w["phase"] for w in env["workloads"]} == {"api": "ready"}
    assert env["health"] == "healthy"


def test_unchanged_redeploy_appends_nothing_and_keeps_the_container(box):
    """docs/reference-deploy.md#deploys-to-k8scluster-and-compose-targets: re-deploying the running release
    appends no promotion, still applies (`up -d` leaves the running container alone) and is ready at once:
    the same container, not restarted, and no stability window sat out."""
    (before,) = box.containers()
    start = time.monotonic()
    code, again = box.json("env", "deploy", "box", "v1", "--yes", "--timeout", "90", "--stability-window", "30")
    assert code == 0, again
    assert time.monotonic() - start < 30  # the 30 s window was not waited: nothing changed
    assert not again["appended"] and again["applied"] and again["rollout"]["phase"] == "ready"
    (after,) = box.containers()
    assert after["Id"] == before["Id"] and after["State"]["StartedAt"] == before["State"]["StartedAt"]
    code, shown = box.json("ledger", "show", "box")
    assert [p["release"] for p in shown["promotions"]] == ["v1"] and len(shown["applies"]) == 2



def test_a_deploy_refused_before_its_apply_ends_the_early_up(box):
    """docs/reference-deploy.md#deploys-to-k8scluster-and-compose-targets: an approved deploy starts Compose's
    `up -d` early (the file on its stdin after the promotion); refused before its apply (exit 3, an
    `--expect-current` that does not hold), that process is ended having changed nothing: the same
    container runs, no apply is recorded and no Compose process of the project is left."""
    recorded = Path(box.demo.env["FRAMEWORK_LEDGER_HOME"]) / "projects" / "demo" / "runtime" / "box" / "compose.project"
    assert recorded.read_text().strip() == box.project  # what the early `up -d` starts with
    (before,) = box.containers()
    code, doc = box.json("env", "deploy", "box", "v1", "--yes", "--expect-current", "p-not-the-current-one")
    assert code == 3, doc
    (after,) = box.containers()
    assert after["Id"] == before["Id"] and after["State"]["StartedAt"] == before["State"]["StartedAt"]
    assert len(box.json("ledger", "show", "box")[1]["applies"]) == 2
    marker = f"\0-p\0{box.project}\0-f\0-\0".encode()
    left = [p.name for p in Path("/proc").iterdir() if p.name.isdigit() and marker in _cmdline(p)]
    assert not left, left


def _cmdline(proc: Path) -> bytes:
    try:
        return b"\0" + (proc / "cmdline").read_bytes()
    except OSError:
        return b""


def test_a_changed_image_rolls_out_and_the_rollouts_screen_reads_it(box, monkeypatch: pytest.MonkeyPatch):
    """docs/reference-deploy.md#deploys-to-k8scluster-and-compose-targets: a new image is a new promotion whose
    `up -d` replaces the container (the rollout passes `stabilizing` before `ready`: the apply's recorded
    transitions); the dashboard's Rollouts data (engine.deploy.rollouts) lists the Compose environment's
    rollout from the ledger like any other, with its live container's health and the tail of its log."""
    image, digest = box.daemon.build_and_push("demo/api", "v2", marker="v2")
    assert image == box.image and digest != box.digest
    box.release("v2", digest)
    code, doc = box.json("env", "deploy", "box", "v2", "--yes", "--timeout", "90", "--stability-window", "0.5")
    assert code == 0, doc
    assert doc["appended"] and doc["rollout"]["phase"] == "ready"
    assert box.get("/version").strip() == "v2"
    code, shown = box.json("ledger", "show", "box")
    assert [p["release"] for p in shown["promotions"]] == ["v2", "v1"]  # newest first
    code, st = box.json("env", "status", "box")
    assert code == 0 and st["environments"][0]["images"][0]["running_digest"] == digest
    rollouts = (
        "from engine.deploy.rollouts import rollouts\nfrom engine.project import find_project\n"
        "from engine.ledger.store import Ledger\nimport json\np = find_project()\nv = rollouts(p)\n"
        "print(json.dumps([r.model_dump() for r in v.environments if r.env == 'box']))\n"
        "with Ledger.open(p.key) as led:\n"
        "    print(json.dumps([ph for _, ph, _ in led.phase_records(led.applies('box', limit=1)[0].seq)]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", rollouts], cwd=box.demo.root, env=box.demo.env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows, phases = proc.stdout.splitlines()
    (row,) = json.loads(rows)
    assert json.loads(phases)[-2:] == ["stabilizing", "ready"], phases
    assert row["target"] == "compose" and row["release"] == "v2" and row["outcome"] == "ready"
    (w,) = row["workloads"]
    assert w["name"] == "api" and w["phase"] == "ready" and w["healthy"] is True and w["ready_replicas"] == 1
    assert w["log_tail"] == [f"serving on {box.port}"] and w["log_file"].startswith("docker logs ")
    _rollouts_screen_shows(box, monkeypatch)


def _rollouts_screen_shows(box: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Rollouts screen (key 2) itself, on a real Pilot: the Compose environment's last rollout, ready, with
    its container's phase and the tail of its log
    (docs/reference-deploy.md#deploys-to-k8scluster-and-compose-targets)."""
    import asyncio

    from app.dashboard import Dashboard
    from app.settings import deterministic_settings
    from tests.waiting import until_app

    for key, value in box.demo.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(box.demo.root)

    async def scenario() -> None:
        app = Dashboard(project_dir=box.demo.root, settings=deterministic_settings(refresh_seconds=0.5))
        async with app.run_test(size=(140, 40)) as pilot:
            await pilot.press("2")
            await until_app(pilot, lambda: app.current_mode == "rollouts" and app.screen.loads >= 1)
            row = next(r for r in app.screen.view.environments if r.env == "box")
            assert row.target == "compose" and row.outcome == "ready" and row.release == "v2"
            table = app.screen.query_one("#rollout-envs")
            table.move_cursor(row=table.get_row_index("box"))
            await until_app(pilot, lambda: f"log tail of api:\nserving on {box.port}" in str(
                app.screen.query_one("#rollout-log-text").render()))
            assert app.screen.query_one("#rollout-workloads").get_row("api")[:2] == ["api", "ready"]

    asyncio.run(scenario())


def test_env_up_brings_a_local_compose_environment_up(box):
    """docs/reference-deploy.md#deploys-to-k8scluster-and-compose-targets: `env up` of a local Compose
    environment runs its deploy phase with the same runtime: `up -d` pulls the image at the render's tag
    (`dev`) and waits it healthy; no promotion is recorded (a dev stack)."""
    image, _digest = box.daemon.build_and_push("demo/api", "dev", marker="dev")
    project, port = f"up{free_port()}", free_port()
    env_dir = box.demo.root / "deploy" / "kcl" / "boxup"
    env_dir.mkdir(parents=True)
    (env_dir / "main.k").write_text(KCL.format(env="boxup", kind="local", project=project, image=image, port=port))
    code, doc = box.json("env", "up", "boxup", "--no-build", "--timeout", "90")
    assert code == 0, doc
    deploy = [p for p in doc["phases"] if p["name"] == "deploy"]
    assert deploy and deploy[0]["status"] == "done" and f"compose project {project}" in deploy[0]["detail"], doc
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/version", timeout=5) as r:
        assert r.read().decode().strip() == "dev"
    assert box.json("ledger", "show", "boxup")[1]["promotions"] == []


def test_a_crashing_service_is_degraded_and_a_never_healthy_one_times_out(box):
    """docs/reference-deploy.md#deploys-to-k8scluster-and-compose-targets: the exits of every runtime. A
    service whose container exits is `DEGRADED` (outcome `failed`, exit 1, code `degraded`) without
    waiting out the budget; one that runs but never passes its health check stays `progressing` until the
    budget expires (outcome `timed_out`, exit 8). Both applies are recorded with their outcome."""
    env_dir = box.demo.root / "deploy" / "kcl" / "boxbad"
    env_dir.mkdir(parents=True)
    kcl = KCL.format(env="boxbad", kind="self_managed", project=f"bad{free_port()}", image=box.image,
                     port=free_port())
    crashing = kcl.replace('run = ["sh", "-c", "trap', 'run = ["sh", "-c", "exit 3; trap')
    (env_dir / "main.k").write_text(crashing)
    start = time.monotonic()
    code, doc = box.json("env", "deploy", "boxbad", "v1", "--yes", "--timeout", "120")
    assert code == 1 and doc["error"]["code"] == "degraded", doc
    assert time.monotonic() - start < 100  # not the budget
    (res,) = doc["rollout"]["resources"]
    assert res["phase"] == "DEGRADED" and res["outcome"] == "failed" and "api" in doc["error"]["message"]
    (env_dir / "main.k").write_text(kcl.replace('path = "/healthz"', 'path = "/never-there"'))
    code, doc = box.json("env", "deploy", "boxbad", "v1", "--yes", "--timeout", "6")
    assert code == 8 and doc["error"]["code"] == "wait_timed_out", doc
    (res,) = doc["rollout"]["resources"]
    assert res["phase"] == "progressing" and res["outcome"] == "timed_out"
    applies = box.json("ledger", "show", "boxbad")[1]["applies"]
    assert [a["outcome"] for a in applies] == ["timed_out", "failed"]


def test_stopping_the_daemon_leaves_nothing(box):
    """docs/reference-cluster.md#compose-target: everything the test session started for Compose is gone at
    its end: no container, dockerd, containerd, shim or registry process naming its directories, no bridge,
    no directory (the fixture's teardown runs the same stop on failure)."""
    assert box.containers()
    box.daemon.stop()
    assert box.daemon.leftovers() == []
    assert not box.daemon.root.exists()
