"""`framework cluster connect|disconnect` (docs/reference-cluster.md#cluster-connect-and-disconnect): a cluster
someone else runs, recorded on an environment's control plane with a deploy credential.

connect (re-running updates the record): on the cluster, through kubectl and the caller's `--context`,
a namespace `framework-system`, a ServiceAccount `framework-<name>`, a ClusterRole and binding with the
rights a deploy needs (the workload API groups; no RBAC, so no escalation), and a Role letting the
account delete itself (the revocation); then a token for it (`kubectl create token`), sent to the
control plane, which stores it (never this checkout). disconnect: refused while a live environment of
this project targets the cluster (its K8sCluster context, a current promotion in its ledger); else the
control plane revokes the credential first (it deletes the account with the account's own token: the
API server refuses the token from then on), then what connect created is deleted, then the record.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from pydantic import BaseModel

from engine.cluster.config import check_name
from engine.cluster.providers import ClusterError, relayed, run_tool
from engine.errors import Conflict, EngineError, InvalidInput
from engine.project import Project

NAMESPACE = "framework-system"
LABEL = "framework.dev/cluster"
MANAGED = {"app.kubernetes.io/managed-by": "framework"}
DEPLOY_GROUPS = ["", "apps", "batch", "networking.k8s.io", "autoscaling", "policy"]
TOKEN_HOURS = 8760


class Connected(BaseModel):
    name: str
    context: str
    env: str
    endpoint: str
    auth: str
    namespace: str
    service_account: str
    updated: bool  # the control plane already knew this cluster (connect re-run)
    credential: str  # "stored" on the control plane; never the token itself


class Disconnected(BaseModel):
    name: str
    context: str
    env: str
    endpoint: str
    revoked: bool
    deleted: list[str]


def _kubectl(context: str, *args: str, stdin: str | None = None) -> str:
    out = run_tool(["kubectl", "--context", context, *args], timeout=60, input=stdin)
    if out.returncode != 0:
        raise ClusterError(f"kubectl on context {context!r} failed", hint=relayed("kubectl", out))
    return out.stdout


def objects(name: str) -> list[dict[str, Any]]:
    """What connect creates on the cluster, labelled with the connected cluster's name."""
    sa = f"framework-{name}"
    labels = {**MANAGED, LABEL: name}

    def meta(obj_name: str, namespace: str | None = None) -> dict[str, Any]:
        return {"name": obj_name, "labels": labels, **({"namespace": namespace} if namespace else {})}

    subject = [{"kind": "ServiceAccount", "name": sa, "namespace": NAMESPACE}]
    rbac = "rbac.authorization.k8s.io"
    deploy, revoke = f"framework-deploy-{name}", f"framework-revoke-{name}"
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE, "labels": MANAGED}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(sa, NAMESPACE)},
        {"apiVersion": f"{rbac}/v1", "kind": "ClusterRole", "metadata": meta(deploy),
         "rules": [{"apiGroups": DEPLOY_GROUPS, "resources": ["*"], "verbs": ["*"]}]},
        {"apiVersion": f"{rbac}/v1", "kind": "ClusterRoleBinding", "metadata": meta(deploy), "subjects": subject,
         "roleRef": {"apiGroup": rbac, "kind": "ClusterRole", "name": deploy}},
        {"apiVersion": f"{rbac}/v1", "kind": "Role", "metadata": meta(revoke, NAMESPACE),
         "rules": [{"apiGroups": [""], "resources": ["serviceaccounts"], "resourceNames": [sa], "verbs": ["delete"]}]},
        {"apiVersion": f"{rbac}/v1", "kind": "RoleBinding", "metadata": meta(revoke, NAMESPACE), "subjects": subject,
         "roleRef": {"apiGroup": rbac, "kind": "Role", "name": revoke}},
    ]


def _server_of(context: str) -> dict[str, Any]:
    doc = json.loads(_kubectl(context, "config", "view", "--raw", "--minify", "-o", "json"))
    cluster = ((doc.get("clusters") or [{}])[0].get("cluster")) or {}
    ca = cluster.get("certificate-authority-data")
    if not ca and cluster.get("certificate-authority"):
        with open(cluster["certificate-authority"], "rb") as fh:
            ca = base64.b64encode(fh.read()).decode()
    return {"server": cluster.get("server", ""), "ca": base64.b64decode(ca).decode() if ca else None,
            "insecure": bool(cluster.get("insecure-skip-tls-verify"))}


def _client(project: Project, env: str, token: str | None) -> Any:
    from engine.cloud.client import ControlPlaneClient
    from engine.environments.evaluate import evaluate_environment

    spec = evaluate_environment(project, env)
    if spec.control_plane is None and spec.kind != "hosted":
        raise InvalidInput(f"environment {env!r} declares no control plane (framework.ControlPlane) to record the "
                           "cluster on", hint="--env <an environment with a control plane>")
    return ControlPlaneClient.for_spec(env, spec, token)


def pick_auth(auth: str, context: str) -> str:
    """auto: gcp for a managed-cloud (GKE) context, token otherwise."""
    if auth not in ("auto", "gcp", "token"):
        raise InvalidInput(f"--auth {auth[:40]!r}: choose auto, gcp or token")
    return ("gcp" if context.startswith("gke_") else "token") if auth == "auto" else auth


def connect(project: Project, name: str, *, context: str | None, env: str, auth: str = "auto",
            token: str | None = None) -> Connected:
    check_name(name)
    context = context or name
    how = pick_auth(auth, context)
    if how == "gcp":
        raise EngineError(f"--auth gcp: the control plane would reach cluster {name!r} with Google credentials "
                          "(workload identity), and none are configured for it in this version",
                          hint="connect with --auth token (a service account token the control plane stores)",
                          code="gcp_auth_unavailable")
    client = _client(project, env, token)
    try:
        where = _server_of(context)
        _kubectl(context, "apply", "-f", "-", stdin="\n".join(json.dumps(o) for o in objects(name)))
        secret = _kubectl(context, "create", "token", f"framework-{name}", "-n", NAMESPACE,
                          f"--duration={TOKEN_HOURS}h").strip()
        answer = client.request("POST", f"/v1/clusters/{name}", json={
            "context": context, "auth": how, "namespace": NAMESPACE, "service_account": f"framework-{name}",
            "token": secret, **where})
    finally:
        client.close()
    return Connected(name=name, context=context, env=env, endpoint=client.endpoint, auth=how, namespace=NAMESPACE,
                     service_account=f"framework-{name}", updated=bool(answer.get("updated")),
                     credential=answer["cluster"]["credential"])


def live_environments(project: Project, context: str) -> list[str]:
    """This project's environments that target `context` and run a release (a current promotion)."""
    from engine.environments.evaluate import evaluate_environment
    from engine.environments.listing import list_environments
    from engine.ledger.protocol import open_ledger

    live = []
    for summary in list_environments(project).environments:
        if summary.error:
            continue
        spec = evaluate_environment(project, summary.name)
        if spec.target is None or spec.target.type != "k8s" or spec.target.context != context:
            continue
        with open_ledger(project, summary.name, spec) as ledger:
            if ledger.current(summary.name) is not None:
                live.append(summary.name)
    return live


def disconnect(project: Project, name: str, *, env: str, context: str | None = None,
               token: str | None = None) -> Disconnected:
    check_name(name)
    client = _client(project, env, token)
    try:
        known = {c["name"]: c for c in client.request("GET", "/v1/clusters")["clusters"]}
        if name not in known:
            raise InvalidInput(f"no connected cluster {name!r} on {client.endpoint}",
                               hint=f"known: {', '.join(sorted(known)) or 'none'}", code="not_found")
        context = context or known[name]["context"]
        live = live_environments(project, context)
        if live:
            raise Conflict(f"refused: environment {live[0]!r} is live on cluster {name!r} (context {context})",
                           hint="deploy it elsewhere or remove its K8sCluster target first")
        client.request("POST", f"/v1/clusters/{name}/revoke")  # the credential is refused from here on
        deleted = []
        for kinds, where in (("clusterrolebinding,clusterrole", []),
                             ("rolebinding,role,serviceaccount", ["-n", NAMESPACE])):
            deleted += _kubectl(context, "delete", kinds, *where, "-l", f"{LABEL}={name}", "--ignore-not-found",
                                "-o", "name").split()
        rest = _kubectl(context, "get", "serviceaccounts", "-n", NAMESPACE, "-l", LABEL, "-o", "name").split()
        if not rest:  # the namespace holds no other connection's account
            _kubectl(context, "delete", "namespace", NAMESPACE, "--ignore-not-found", "--wait=false")
            deleted.append(f"namespace/{NAMESPACE}")
        client.request("DELETE", f"/v1/clusters/{name}")
    finally:
        client.close()
    return Disconnected(name=name, context=context, env=env, endpoint=client.endpoint, revoked=True, deleted=deleted)
