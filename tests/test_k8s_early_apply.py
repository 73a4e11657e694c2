"""The kubectl a K8sCluster deploy starts before its promotion (engine/runtime/k8s.py, PendingApply),
against a real API server: compare-and-set (docs/reference-deploy.md#env-deploy: a refused deploy, exit 3, writes no
promotion) holds for the cluster too, since that kubectl is killed unsent and applies nothing; and
kubectl given no object at all prunes nothing, and objects written to it before the promotion are
applied only once cleared (its guard kills it when the deploy dies first), so a deploy that dies while
its kubectl waits leaves the cluster as it was."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from k8s_fixtures import API, WEB, digest, kdemo_fixture  # noqa: E402,F401

from tests.waiting import until  # noqa: E402


def _kubectl_applying(ns: str) -> list[int]:
    """Pids of kubectl processes applying to namespace `ns` (read from /proc)."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError):
            continue
        if argv and argv[0].endswith(b"kubectl") and b"apply" in argv and ns.encode() in argv:
            pids.append(int(entry.name))
    return pids


def _api_image(kd) -> str:  # type: ignore[no-untyped-def]
    dep = json.loads(kd.kubectl("get", "deployment", "api", "-n", kd.ns, "-o", "json"))
    return str(dep["spec"]["template"]["spec"]["containers"][0]["image"])


def test_refused_deploy_applies_nothing_and_leaves_no_kubectl(kdemo):
    """Compare-and-set: a deploy refused by compare-and-set (--expect-current of another promotion: exit 3)
    after its kubectl was started applies nothing (the Deployment keeps the running release's image)
    and leaves no kubectl behind."""
    kd = kdemo
    kd.release("v1", {"api": (API, digest("api-1")), "web": (WEB, digest("web-1"))})
    kd.release("v2", {"api": (API, digest("api-2")), "web": (WEB, digest("web-1"))})
    assert kd.json("env", "deploy", "cluster", "v1", "--yes", "--timeout", "90")[0] == 0
    code, doc = kd.json("env", "deploy", "cluster", "v2", "--yes", "--expect-current", "prom-not-this-one")
    assert code == 3 and doc["error"]["code"] == "promotion_conflict", doc
    assert _api_image(kd) == f"{API}@{digest('api-1')}"
    assert _kubectl_applying(kd.ns) == []
    code, shown = kd.json("ledger", "show", "cluster")
    assert [p["release"] for p in shown["promotions"]] == ["v1"]


def test_kubectl_given_no_object_prunes_nothing(kdemo):
    """The early-started kubectl's input ended with no object (its deploy died before writing it):
    kubectl refuses ("no objects passed to apply") and its ApplySet prune removes nothing."""
    kd = kdemo
    kd.release("v1", {"api": (API, digest("api-1")), "web": (WEB, digest("web-1"))})
    assert kd.json("env", "deploy", "cluster", "v1", "--yes", "--timeout", "90")[0] == 0
    env = {**kd.demo.env, "KUBECTL_APPLYSET": "true"}
    out = subprocess.run(
        ["kubectl", "--context", "k3d-demo", "apply", "--server-side", "--field-manager=framework",
         "--force-conflicts", "-f", "-", "-o", "json", "-n", kd.ns, "--prune", "--applyset=framework-cluster"],
        input="", capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode != 0 and "no objects passed to apply" in out.stderr
    assert _api_image(kd) == f"{API}@{digest('api-1')}"
    assert json.loads(kd.kubectl("get", "deployment", "web", "-n", kd.ns, "-o", "json"))["metadata"]["name"] == "web"


DIES_AFTER_PRELOAD = """
import fcntl, os, signal, struct, sys, termios
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from tests.waiting import until
from engine.project import find_project
from engine.runtime.k8s import Kube, applyset_name
from engine.runtime.k8s_runtime import K8sRuntime, render_release
from engine.releases.store import load_release

images = load_release(find_project(Path.cwd()), "v2").images
ns, objects = render_release(find_project(Path.cwd()), "cluster", images)
runtime = K8sRuntime(Kube("k3d-demo"), "cluster", ns, objects)
pending = runtime.kube.start_apply(prune_set=applyset_name("cluster"), namespace=ns)
runtime.preload(pending, images)
for writer in pending._writers:
    writer.join()
pipe = pending._pipe.fileno()
unread = lambda: struct.unpack("i", fcntl.ioctl(pipe, termios.FIONREAD, b"\\0" * 4))[0]
until(lambda: unread() == 0, what="kubectl's guard to read the objects")
print(pending.proc.pid, flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # the deploy dies before its promotion: nothing cleared
"""


def test_preloaded_objects_of_a_deploy_that_dies_are_not_applied(kdemo):
    """docs/reference-k8s.md#env-deploy-env-version-on-a-k8scluster: the objects written to the early kubectl
    are applied only once cleared after the promotion; a deploy that dies first (SIGKILL: no cleanup of its
    own runs) ends its kubectl with its input still open, so the cluster keeps the running release and no
    kubectl is left."""
    kd = kdemo
    kd.release("v1", {"api": (API, digest("api-1")), "web": (WEB, digest("web-1"))})
    kd.release("v2", {"api": (API, digest("api-2")), "web": (WEB, digest("web-1"))})
    assert kd.json("env", "deploy", "cluster", "v1", "--yes", "--timeout", "90")[0] == 0
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-c", DIES_AFTER_PRELOAD, str(root)], cwd=kd.root, env=kd.demo.env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == -9 and out.stdout.strip().isdigit(), out.stderr
    until(lambda: _kubectl_applying(kd.ns) == [], what="the dead deploy's kubectl to be gone")
    assert _api_image(kd) == f"{API}@{digest('api-1')}"
