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
from typing import Any

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


def _killed_deploy(kd: Any, script: str) -> None:
    """Run `script` (a deploy that SIGKILLs itself at a chosen point) and wait until its kubectl is gone."""
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-c", script, str(root)], cwd=kd.root, env=kd.demo.env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == -9 and out.stdout.strip().isdigit(), out.stderr
    until(lambda: _kubectl_applying(kd.ns) == [], what="the dead deploy's kubectl to be gone")


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
from typing import Any
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
    _killed_deploy(kd, DIES_AFTER_PRELOAD)
    assert _api_image(kd) == f"{API}@{digest('api-1')}"


def _entry(kd) -> Path:  # type: ignore[no-untyped-def]
    return Path(kd.demo.env["FRAMEWORK_LEDGER_HOME"]) / "projects" / "demo" / "runtime" / "cluster" / "k8s-render"


def _steady(value):  # type: ignore[no-untyped-def]
    """A deploy's document without what differs between two runs of it (times, durations)."""
    if isinstance(value, dict):
        return {k: _steady(v) for k, v in value.items()
                if not any(w in k for w in ("_at", "time", "duration", "seconds", "elapsed", "took"))}
    if isinstance(value, list):
        return [_steady(v) for v in value]
    return value


def test_stored_render_starts_kubectl_early_with_the_same_outcome(kdemo):
    """docs/reference-k8s.md#the-render-cache: an unchanged deploy's objects are stored (0600) after it
    renders them, and the next deploy of the same inputs starts kubectl with them at once; its document,
    exit code and ledger records are those of a deploy without the stored render."""
    kd = kdemo
    kd.release("v1", {"api": (API, digest("api-1")), "web": (WEB, digest("web-1"))})
    assert kd.json("env", "deploy", "cluster", "v1", "--yes", "--timeout", "90")[0] == 0
    entry = _entry(kd)
    assert entry.stat().st_mode & 0o777 == 0o600
    head, _, stream = entry.read_bytes().partition(b"\n")
    meta = json.loads(head)
    assert (meta["context"], meta["namespace"], meta["prune_set"], meta["release"]) == (
        "k3d-demo", kd.ns, "framework-cluster", "v1")
    assert f"{API}@{digest('api-1')}".encode() in stream and stream.count(b"\n") >= 4
    stored = entry.read_bytes()
    hit_code, hit = kd.json("env", "deploy", "cluster", "v1", "--yes", "--timeout", "90")
    assert entry.read_bytes() == stored  # a hit writes nothing
    ledger_after_hit = kd.json("ledger", "show", "cluster")[1]
    entry.unlink()
    miss_code, miss = kd.json("env", "deploy", "cluster", "v1", "--yes", "--timeout", "90")
    assert entry.read_bytes() == stored  # the same inputs store the same render
    assert hit_code == miss_code == 0 and _steady(hit) == _steady(miss), (hit, miss)
    ledger_after_miss = kd.json("ledger", "show", "cluster")[1]
    hit_applies, miss_applies = (sorted(d.pop("applies"), key=lambda a: a["seq"])
                                 for d in (ledger_after_hit, ledger_after_miss))
    assert miss_applies[:-1] == hit_applies  # each deploy records one apply, the same but its process
    assert ({k: v for k, v in _steady(miss_applies[-1]).items() if k not in ("seq", "pid")}
            == {k: v for k, v in _steady(hit_applies[-1]).items() if k not in ("seq", "pid")}), miss_applies
    assert _steady(ledger_after_miss) == _steady(ledger_after_hit)
    assert _kubectl_applying(kd.ns) == []


def test_a_stale_stored_render_is_never_applied(kdemo):
    """docs/reference-k8s.md#the-render-cache: the stored objects are only a prediction; when those the deploy
    renders differ (here: the entry edited to another image under the same digest), the kubectl started with
    them is ended unsent, a fresh one applies the rendered objects, and the entry is stored again."""
    kd = kdemo
    kd.release("v1", {"api": (API, digest("api-1")), "web": (WEB, digest("web-1"))})
    assert kd.json("env", "deploy", "cluster", "v1", "--yes", "--timeout", "90")[0] == 0
    entry = _entry(kd)
    good = entry.read_bytes()
    entry.write_bytes(good.replace(digest("api-1").encode(), digest("api-9").encode()))
    code, doc = kd.json("env", "deploy", "cluster", "v1", "--yes", "--timeout", "90")
    assert code == 0 and doc["rollout"]["phase"] == "ready", doc
    assert _api_image(kd) == f"{API}@{digest('api-1')}"
    assert entry.read_bytes() == good
    assert _kubectl_applying(kd.ns) == []


def test_a_refused_deploy_ends_the_kubectl_started_from_a_stored_render(kdemo):
    """Compare-and-set (docs/reference-deploy.md#env-deploy): a deploy refused (exit 3) after its kubectl was
    started at process start with a stored render applies nothing and leaves no kubectl; and an edit of an
    input (the KCL) changes the digest, so the stored render is not used and is replaced."""
    kd = kdemo
    kd.release("v1", {"api": (API, digest("api-1")), "web": (WEB, digest("web-1"))})
    assert kd.json("env", "deploy", "cluster", "v1", "--yes", "--timeout", "90")[0] == 0
    entry = _entry(kd)
    entry.write_bytes(entry.read_bytes().replace(digest("api-1").encode(), digest("api-9").encode()))
    code, doc = kd.json("env", "deploy", "cluster", "v1", "--yes", "--expect-current", "prom-not-this-one")
    assert code == 3 and doc["error"]["code"] == "promotion_conflict", doc
    assert _api_image(kd) == f"{API}@{digest('api-1')}"
    assert _kubectl_applying(kd.ns) == []
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from engine.runtime import k8s_early

    before = k8s_early.render_key(kd.root, "cluster", "v1", None)
    assert before and json.loads(entry.read_bytes().partition(b"\n")[0])["key"] == before
    k8s_early._KEYS.clear()
    assert k8s_early.render_key(kd.root, "cluster", "v1", kd.ns) != before  # --namespace is an input
    kd.edit_kcl('framework.Environment {', 'framework.Environment {\n    # edited\n')
    k8s_early._KEYS.clear()
    after = k8s_early.render_key(kd.root, "cluster", "v1", None)
    assert after not in ("", before)
    code, doc = kd.json("env", "deploy", "cluster", "v1", "--yes", "--timeout", "90")  # the entry no longer matches
    assert code == 0 and doc["rollout"]["phase"] == "ready", doc
    assert _api_image(kd) == f"{API}@{digest('api-1')}"
    assert json.loads(entry.read_bytes().partition(b"\n")[0])["key"] == after
    assert digest("api-9").encode() not in entry.read_bytes()
    assert _kubectl_applying(kd.ns) == []


EARLY_THEN_DIES = """
import os, signal, sys
from pathlib import Path
from typing import Any
sys.path.insert(0, sys.argv[1])
from tests.waiting import until
from engine.runtime import k8s_early

k8s_early.start_early(Path.cwd(), "cluster", "v1", None)
pending = k8s_early._STARTED[0]
for writer in pending._writers:
    writer.join()
print(pending.proc.pid, flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # the deploy dies before its promotion: nothing cleared
"""


def test_a_deploy_killed_after_its_early_kubectl_started_applies_nothing(kdemo):
    """docs/reference-k8s.md#the-render-cache: the kubectl started with a stored render is behind the same guard
    as any early kubectl: a deploy killed (SIGKILL) before clearing it leaves the cluster as it was and no
    kubectl behind (here the stored objects name another image, which must never reach the cluster)."""
    kd = kdemo
    kd.release("v1", {"api": (API, digest("api-1")), "web": (WEB, digest("web-1"))})
    assert kd.json("env", "deploy", "cluster", "v1", "--yes", "--timeout", "90")[0] == 0
    entry = _entry(kd)
    entry.write_bytes(entry.read_bytes().replace(digest("api-1").encode(), digest("api-9").encode()))
    _killed_deploy(kd, EARLY_THEN_DIES)
    assert _api_image(kd) == f"{API}@{digest('api-1')}"
