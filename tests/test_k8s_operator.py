"""Operators and CRDs (docs/reference-authoring.md#operators-and-crds): `scaffold operator` and `scaffold crd`
on a real project, the generated Go module built, vetted and tested (envtest on the project's own
kube-apiserver and etcd), the operator run against the shared test control plane (a created custom resource
gets its status), and `env deploy` to a K8sCluster applying its CRD, RBAC and Deployment.

One generated project per module (scaffolded once, read by every test; the tests that change it work on
copies). The module name holds `k8s`: it runs in the k8s scheduling unit beside the cluster's other users.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parent))
from k8s_cluster import BIN as K8S_BIN  # noqa: E402
from k8s_cluster import missing_tools  # noqa: E402
from k8s_fixtures import API, WEB, digest, kdemo_fixture  # noqa: E402,F401

from tests.authoring_fixtures import _GO_ENV, TOOLS, fw, go, go_caches, tree  # noqa: F401
from tests.waiting import until

pytestmark = pytest.mark.skipif(bool(missing_tools()) or not (TOOLS / "controller-gen").is_file(),
                                reason="needs make k8s-tools and make go-tools (controller-gen)")
GROUP = "widgets.example.com"


@pytest.fixture(scope="module")
def op_project(authored: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's project with `scaffold operator widgets --crd-type Widget` (the CLI, real) and
    `scaffold crd Gadget` (in-process): scaffolded and generated once for the module."""
    root = Path(shutil.copytree(authored, tmp_path_factory.mktemp("operator") / "shop", symlinks=True))
    for key, value in {**_GO_ENV, "GOFLAGS": "-buildvcs=false"}.items():
        os.environ.setdefault(key, value)
    code, doc, err = fw("scaffold", "operator", "widgets", "--crd-type", "Widget", cwd=root, timeout=600)
    assert code == 0, (doc, err)
    from engine.authoring.scaffold_operator import scaffold_crd
    from engine.project import Project

    crd = scaffold_crd(Project(root), "Gadget")
    assert crd.born == ["Gadget"]
    return root


def test_scaffold_operator_writes_its_files_and_wires_them_into_the_project(op_project: Path) -> None:
    """`scaffold operator` and `scaffold crd` (docs/reference-authoring.md#operators-and-crds): the manager, the
    group-version, per kind its types, reconciler shim and test (scaffold-once, in the birth ledger); entries
    under `operators` and `binaries`; a dev workload that renders; generated setup.go, deep-copy, CRDs and the
    ClusterRole from the RBAC markers (hash-marked); a second `generate` changes nothing."""
    from engine.authoring import markers
    from engine.authoring.generate import generate
    from engine.environments.render.pipeline import render_environment
    from engine.project import Project

    root = op_project
    cfg = yaml.safe_load((root / "framework.yaml").read_text())
    assert {"name": "widgets", "group": GROUP, "version": "v1alpha1",
            "api_package": "api/widgets/v1alpha1"} in cfg["operators"]
    assert {"name": "widgets", "main": "./cmd/widgets"} in cfg["binaries"]
    born = {b["path"]: b["by"] for b in json.loads((root / ".framework/scaffolded.json").read_text())["files"]}
    for path, by in {"cmd/widgets/main.go": "scaffold operator",
                     "api/widgets/v1alpha1/groupversion_info.go": "scaffold operator",
                     "api/widgets/v1alpha1/widget_types.go": "scaffold operator",
                     "internal/widgets/controller/widget_controller.go": "scaffold operator",
                     "api/widgets/v1alpha1/gadget_types.go": "scaffold crd",
                     "internal/widgets/controller/gadget_controller_test.go": "scaffold crd"}.items():
        assert born.get(path) == by, path
    generated = ["internal/widgets/controller/setup.go", "api/widgets/v1alpha1/zz_generated.deepcopy.go",
                 f"deploy/operators/widgets/crd/{GROUP}_widgets.yaml",
                 f"deploy/operators/widgets/crd/{GROUP}_gadgets.yaml", "deploy/operators/widgets/rbac/role.yaml"]
    for rel in generated:
        assert markers.check(rel, (root / rel).read_text()) == "ok", rel
    setup = (root / generated[0]).read_text()
    assert "&GadgetReconciler{" in setup and "&WidgetReconciler{" in setup
    crd = next(d for d in yaml.safe_load_all((root / generated[2]).read_text()) if d)
    assert crd["kind"] == "CustomResourceDefinition" and crd["spec"]["group"] == GROUP
    assert crd["spec"]["versions"][0]["subresources"] == {"status": {}}
    role = next(d for d in yaml.safe_load_all((root / generated[4]).read_text()) if d)
    rules = {(res, tuple(r["verbs"])) for r in role["rules"] if r["apiGroups"] == [GROUP] for res in r["resources"]}
    assert ("widgets/status", ("get", "patch", "update")) in rules and role["metadata"]["name"] == "widgets-manager"
    assert "sigs.k8s.io/controller-runtime v0.24.1" in (root / "go.mod").read_text()
    dev = render_environment(Project(root), "dev")
    widgets = next(o.document for o in dev.objects if o.name == "widgets")
    assert widgets["command"][0].endswith("bin/widgets") and widgets["health"]["path"] == "/healthz"
    assert generate(Project(root)).up_to_date


# On a machine whose Go build cache is cold (a first `make test`), building controller-runtime and the
# envtest dependencies takes longer than the suite's 300 s per test; each go call has its own 900 s bound.
@pytest.mark.timeout(2700)
def test_generated_operator_builds_vets_and_its_envtest_passes(op_project: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The generated operator is code a Go developer keeps (docs/reference-authoring.md#operators-and-crds):
    `go build`, `go vet` and `go test ./...` pass; each kind's reconciler test runs (not skipped) against a
    real kube-apiserver and etcd through envtest, KUBEBUILDER_ASSETS pointing at the project's k8s binaries."""
    for args in (("build", "./..."), ("vet", "./...")):
        proc = go(*args, cwd=op_project, timeout=900)
        assert proc.returncode == 0, (args, proc.stderr[-3000:])
    monkeypatch.setenv("KUBEBUILDER_ASSETS", str(K8S_BIN))
    proc = go("test", "./...", "-v", "-count=1", cwd=op_project, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for kind in ("Widget", "Gadget"):
        assert f"--- PASS: Test{kind}ReconcilerWritesStatus" in proc.stdout, proc.stdout[-3000:]


def test_operator_reconciles_a_custom_resource_on_the_test_control_plane(op_project: Path, k8s) -> None:  # type: ignore[no-untyped-def]
    """The operator, run against the real API server (docs/reference-authoring.md#operators-and-crds): a Widget
    created through the API gets its status written (phase Ready, observedGeneration, a Ready condition), and
    a spec change (a new generation) is reconciled again."""
    binary = op_project / "bin" / "widgets"
    proc = go("build", "-o", str(binary), "./cmd/widgets", cwd=op_project, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    k8s.kubectl("apply", "--server-side", "--force-conflicts", "-f",
                str(op_project / "deploy/operators/widgets/crd"))
    until(lambda: "Established" in k8s.kubectl("get", "crd", f"widgets.{GROUP}", "-o",
                                               "jsonpath={.status.conditions[*].type}"), 60, "the CRD established")
    ns = f"op-{uuid.uuid4().hex[:8]}"
    k8s.kubectl("create", "namespace", ns)
    manager = subprocess.Popen([str(binary), f"--kubeconfig={k8s.root / 'control-plane.kubeconfig'}",
                                "--health-probe-bind-address=0", "--metrics-bind-address=0"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        widget = {"apiVersion": f"{GROUP}/v1alpha1", "kind": "Widget",
                  "metadata": {"name": "sample", "namespace": ns}, "spec": {"message": "hello"}}
        k8s.kubectl("apply", "-f", "-", stdin=json.dumps(widget))

        def status(generation: int) -> dict | None:
            if manager.poll() is not None:
                raise AssertionError(f"the operator exited {manager.returncode}: {manager.stderr.read()[-2000:]}")
            obj = json.loads(k8s.kubectl("get", "widget", "sample", "-n", ns, "-o", "json"))
            st = obj.get("status") or {}
            observed = st.get("observedGeneration") == generation == obj["metadata"]["generation"]
            ok = st.get("phase") == "Ready" and observed
            return st if ok else None

        st = until(lambda: status(1), 60, "the Widget's status written by the operator")
        assert [(c["type"], c["status"]) for c in st["conditions"]] == [("Ready", "True")]
        k8s.kubectl("patch", "widget", "sample", "-n", ns, "--type=merge", "-p", '{"spec":{"message":"again"}}')
        until(lambda: status(2), 60, "generation 2 reconciled")
    finally:
        manager.terminate()
        manager.wait(timeout=30)
        k8s.kubectl("delete", "namespace", ns, "--wait=false")


def test_env_deploy_applies_the_operators_crds_rbac_and_deployment(op_project: Path, kdemo) -> None:  # type: ignore[no-untyped-def]
    """`env deploy` to a K8sCluster environment (docs/reference-authoring.md#operators-and-crds): the operator
    workload's `manifests` (the generated CRDs and ClusterRole by glob, a ClusterRoleBinding inline) are
    applied with its Deployment, which rolls out; a glob matching nothing is a render error (exit 1)."""
    kd = kdemo
    shutil.copytree(op_project / "deploy/operators", kd.root / "deploy/operators")
    image = "registry.example.test/demo/widgets"
    workload = f'''        framework.Workload {{
            name = "widgets"
            image = "{image}"
            build = framework.Build {{type = "docker", context = "."}}
            ports = [framework.Port {{port = 8081}}]
            health = framework.HealthCheck {{path = "/healthz"}}
            manifests = ["deploy/operators/widgets/*/*.yaml", {{
                apiVersion = "rbac.authorization.k8s.io/v1", kind = "ClusterRoleBinding"
                metadata.name = "widgets-manager-{kd.ns}"
                roleRef = {{apiGroup = "rbac.authorization.k8s.io", kind = "ClusterRole", name = "widgets-manager"}}
                subjects = [{{kind = "ServiceAccount", name = "default", namespace = "{kd.ns}"}}]
            }}]
        }}
'''
    text = kd.kcl().read_text()
    end = text.rindex("\n    ]\n}")
    kd.kcl().write_text(text[:end] + "\n" + workload + text[end:])
    kd.release("v1", {"api": (API, digest("api-1")), "web": (WEB, digest("web-1")),
                      "widgets": (image, digest("widgets-1"))})
    code, doc = kd.json("env", "deploy", "cluster", "v1", "--yes", "--timeout", "90")
    assert code == 0, doc
    res = {r["name"]: r for r in doc["rollout"]["resources"]}
    assert res["widgets"]["outcome"] == "ready" and res["widgets"]["kind"] == "Deployment"
    crd = json.loads(kd.kubectl("get", "crd", f"widgets.{GROUP}", "-o", "json"))
    assert crd["spec"]["names"]["kind"] == "Widget"
    assert json.loads(kd.kubectl("get", "crd", f"gadgets.{GROUP}", "-o", "json"))["spec"]["group"] == GROUP
    role = json.loads(kd.kubectl("get", "clusterrole", "widgets-manager", "-o", "json"))
    assert any("widgets/status" in r["resources"] for r in role["rules"])
    binding = json.loads(kd.kubectl("get", "clusterrolebinding", f"widgets-manager-{kd.ns}", "-o", "json"))
    assert binding["subjects"][0]["namespace"] == kd.ns
    dep = kd.get("deployment/widgets")
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == f"{image}@{digest('widgets-1')}"
    kd.edit_kcl('"deploy/operators/widgets/*/*.yaml"', '"deploy/operators/nothing/*.yaml"')
    code, doc = kd.json("env", "render", "cluster")
    assert code == 1 and doc["error"]["code"] == "render_error" and "matches no file" in doc["error"]["message"]


def test_bad_input_is_refused_clearly_and_writes_nothing(op_project: Path) -> None:
    """Scaffold refusals (docs/reference-authoring.md#operators-and-crds): a bad version, group, API package or
    kind is bad usage (exit 2); an existing operator or kind, an unknown --operator is invalid input (exit 1);
    none writes a file. The CLI for one of each exit per command, the engine for the rest."""
    from engine.authoring.scaffold_operator import scaffold_crd, scaffold_operator
    from engine.errors import InvalidInput, UsageError
    from engine.project import Project

    before = tree(op_project)
    for args, exit_code in {("operator", "other", "--version", "1.0"): 2, ("operator", "widgets"): 1,
                            ("crd", "Bad-Kind"): 2, ("crd", "Thing", "--operator", "nope"): 1}.items():
        code, doc, err = fw("scaffold", *args, cwd=op_project)
        assert (code, doc.get("ok"), doc.get("exit_code")) == (exit_code, False, exit_code), (args, doc, err)
        assert doc["error"]["message"] and "Traceback" not in err, args
    project = Project(op_project)
    usage = [dict(group="NoDots"), dict(api_package="api/other/v9"), dict(api_package="internal/x/v1alpha1"),
             dict(crd_type="x y"), dict(crd_type="OtherList")]
    for kwargs in usage:
        with pytest.raises(UsageError):
            scaffold_operator(project, "other", **kwargs)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="api/widgets/v1alpha1 exists"):
        scaffold_operator(project, "gizmo", api_package="api/widgets/v1alpha1")
    with pytest.raises(InvalidInput, match="already reconciles Widget"):
        scaffold_crd(project, "widget")
    assert tree(op_project) == before


def test_dry_run_no_generate_and_rescaffold(op_project: Path, tmp_path: Path) -> None:
    """`--dry-run` lists the files and writes none; `--no-generate` writes only the scaffold's own files (no
    controller-gen output); `project rescaffold` re-creates a deleted reconciler test as its scaffold writes it
    (docs/reference-authoring.md#operators-and-crds)."""
    from engine.authoring.records import rescaffold
    from engine.authoring.scaffold_operator import scaffold_crd, scaffold_operator
    from engine.project import Project

    before = tree(op_project)
    dry = scaffold_crd(Project(op_project), "Sprocket", no_generate=True, dry_run=True)
    assert {f["path"] for f in dry.files} >= {"api/widgets/v1alpha1/sprocket_types.go",
                                               "internal/widgets/controller/sprocket_controller_test.go"}
    assert tree(op_project) == before
    copy = Path(shutil.copytree(op_project, tmp_path / "shop", symlinks=True))
    made = scaffold_operator(Project(copy), "gears", group="gears.example.org", version="v1", no_generate=True)
    paths = {f["path"] for f in made.files}
    assert {"cmd/gears/main.go", "api/gears/v1/groupversion_info.go", "framework.yaml",
            "deploy/kcl/dev/main.k"} <= paths
    assert not any("zz_generated" in p or p.startswith("deploy/operators/gears") for p in paths)
    test_file = copy / "internal/widgets/controller/widget_controller_test.go"
    original = test_file.read_text()
    test_file.unlink()
    rescaffold(Project(copy), ["internal/widgets/controller/widget_controller_test.go"])
    assert test_file.read_text() == original
