"""`env deploy --supersede` on a K8sCluster is not undone by the deploy it replaces
(docs/reference-deploy.md#supersede), on the suite's shared control plane (tests/k8s_fixtures.py).

The old deploy's kubectl is a shim on its PATH in front of the real one: it reads the objects the deploy
clears (kubectl's input ends), says so, and applies them only when the test opens its FIFO: a slow
apply (kubectl's start and OpenAPI reads) made deterministic."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import cli_fork
from deploy_fixtures import FRAMEWORK_BIN
from k8s_fixtures import API, WEB, digest, kdemo_fixture  # noqa: E402,F401

from tests.waiting import until  # noqa: E402

SHIM = """#!/bin/sh
# apply: read the cleared objects, say so, then apply them only once the test opens the FIFO
for a in "$@"; do [ "$a" = apply ] && held=1; done
if [ -n "$held" ] && [ -p "$KUBECTL_HOLD" ]; then
    objects=$(mktemp)
    cat > "$objects"
    : > "$KUBECTL_HOLD.cleared"
    cat "$KUBECTL_HOLD" > /dev/null
    exec {real} "$@" < "$objects"
fi
exec {real} "$@"
"""


def test_supersede_waits_for_the_old_kubectl_apply_and_the_cluster_ends_on_the_new_template(kdemo, tmp_path):
    """docs/reference-deploy.md#supersede: the old deploy has cleared its objects but its kubectl has not
    applied them yet; `--supersede` waits for that apply's answer (its `supersede_wait` event) before its
    own, so the Deployment ends on the NEW image, the ledger's current promotion is the new one and the
    old deploy exits 6."""
    kd = kdemo
    kd.kubectl("create", "namespace", kd.ns)  # the first apply finds it: one kubectl apply per deploy
    kd.release("v1", {"api": (API, digest("api-1")), "web": (WEB, digest("web-1"))})
    kd.release("v2", {"api": (API, digest("api-2")), "web": (WEB, digest("web-1"))})
    shim_dir = tmp_path / "shim"
    shim_dir.mkdir()
    real = shutil.which("kubectl", path=kd.demo.env["PATH"])
    assert real is not None
    (shim_dir / "kubectl").write_text(SHIM.format(real=real))
    (shim_dir / "kubectl").chmod(0o755)
    hold = tmp_path / "hold.fifo"
    os.mkfifo(hold)
    old_env = {**kd.demo.env, "PATH": f"{shim_dir}{os.pathsep}{kd.demo.env['PATH']}", "KUBECTL_HOLD": str(hold)}
    old = cli_fork.popen([FRAMEWORK_BIN, "env", "deploy", "cluster", "v1", "--yes", "--json", "--timeout", "120"],
                         cwd=kd.root, env=old_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    err_path = tmp_path / "superseder.err"
    new = None
    try:
        until(lambda: Path(f"{hold}.cleared").exists() or old.poll() is not None, timeout=60,
              what="the old deploy clearing its objects to kubectl")
        assert old.poll() is None
        with err_path.open("w") as err:
            new = cli_fork.popen([FRAMEWORK_BIN, "env", "deploy", "cluster", "v2", "--yes", "--supersede", "--json",
                                  "--events", "--timeout", "90"],
                                 cwd=kd.root, env=kd.demo.env, stdout=subprocess.PIPE, stderr=err, text=True)

        def api_image() -> str:
            found = json.loads(kd.kubectl("get", "deployments", "-n", kd.ns, "-o", "json"))["items"]
            return next((d["spec"]["template"]["spec"]["containers"][0]["image"] for d in found
                         if d["metadata"]["name"] == "api"), "")

        def superseder_waits_or_applied() -> bool:  # before the fix it would not wait: it would apply v2 now
            return "supersede_wait" in err_path.read_text() or digest("api-2") in api_image()

        until(superseder_waits_or_applied, timeout=60, what="the superseding deploy waiting on the old apply")
        fd = os.open(hold, os.O_WRONLY)  # the old kubectl applies now
        hold.unlink()
        os.close(fd)
        out, _ = new.communicate(timeout=120)
        old_out, old_err = old.communicate(timeout=60)
    finally:
        for proc in (old, new):
            if proc is not None and proc.poll() is None:
                proc.kill()
    assert new.returncode == 0, (out, err_path.read_text())
    assert old.returncode == 6, (old_out, old_err)
    assert json.loads(old_out)["error"]["code"] == "superseded"
    new_doc = json.loads(out)
    code, shown = kd.json("ledger", "show", "cluster")
    assert shown["promotions"][0]["release"] == "v2" and shown["promotions"][0]["id"] == new_doc["promotion"]["id"]
    assert digest("api-2") in api_image()  # the cluster on the NEW template, not the old one applied last
