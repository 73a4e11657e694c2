"""`framework env secrets sync <env>` (docs/reference-k8s.md#env-secrets-sync-env): render the environment's cluster
Secrets from the dotenv provider and apply them to a local cluster only; a no-op with a message for
an external secret provider. Never prints, logs or passes a value on a command line: values go to
kubectl on its stdin, and the result names Secrets and keys only.

The dotenv provider reads `deploy/secrets/<env>.env` (KEY=VALUE lines, `#` comments, optional
quotes); a workload's declared secret names become the keys of its Secret `<workload>-secrets`,
exactly what the render's `secretKeyRef`s read. The environment's K8sCluster may declare
`secrets = "external"` (values provisioned by something else: sync does nothing).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine.environments.model import EnvironmentSpec
from engine.errors import EngineError, InvalidInput
from engine.project import Project


class SecretsSyncResult(BaseModel):
    env: str
    context: str | None = None
    namespace: str | None = None
    provider: str
    applied: bool = False
    secrets: list[dict[str, Any]] = []  # {"name", "keys"} - never values
    message: str = ""


def dotenv_path(project: Project, env: str) -> Path:
    return project.root / "deploy" / "secrets" / f"{env}.env"


def read_dotenv(path: Path) -> dict[str, str]:
    """KEY=VALUE lines; `export ` prefixes, blank lines and `#` comments ignored; one pair of
    surrounding quotes removed. A malformed line names its line number, never its content."""
    out: dict[str, str] = {}
    for no, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[7:].lstrip()
        key, sep, value = line.partition("=")
        key = key.strip()
        if not sep or not key.replace("_", "a").isalnum() or key[0].isdigit():
            raise InvalidInput(f"{path}: line {no} is not KEY=VALUE")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        out[key] = value
    return out


def secret_manifests(spec: EnvironmentSpec, namespace: str, values: dict[str, str],
                     project_key: str) -> tuple[list[dict[str, Any]], list[str]]:
    """(Secret manifests, missing "workload: NAME" entries)."""
    from engine.environments.render.k8s import LABEL_ENV, LABEL_NAME, LABEL_PART_OF, secret_name

    manifests, missing = [], []
    for w in spec.workloads:
        if not w.secrets:
            continue
        missing += [f"{w.name}: {s}" for s in w.secrets if s not in values]
        manifests.append({
            "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": secret_name(w), "namespace": namespace,
                         "labels": {LABEL_NAME: w.name, LABEL_PART_OF: project_key, LABEL_ENV: spec.name}},
            "stringData": {s: values.get(s, "") for s in w.secrets},
        })
    return manifests, missing


def secrets_sync(project: Project, env: str) -> SecretsSyncResult:
    from engine.environments.evaluate import evaluate_environment
    from engine.runtime.k8s import check_k8s, is_local
    from engine.runtime.k8s_status import namespace_of

    spec = evaluate_environment(project, env)
    target = spec.target
    if target is None or target.type != "k8s":
        raise InvalidInput(f"{env!r} does not deploy to a Kubernetes cluster; `env secrets sync` applies "
                           "cluster Secrets", hint="its workloads read secrets from the runner's environment")
    if target.secrets == "external":
        return SecretsSyncResult(env=env, context=target.context, provider="external",
                                 message="secrets are provided by an external provider: nothing to sync")
    context = target.context or ""
    if not is_local(context):
        raise InvalidInput(
            f"context {context!r} is not a local cluster; `env secrets sync` applies to local clusters only",
            hint="provision the Secrets of a remote cluster with its own secret manager; "
            "`env deploy` preflight checks every key is there")
    path = dotenv_path(project, env)
    if not path.is_file():
        raise InvalidInput(f"no dotenv file {path.relative_to(project.root)} for {env!r}",
                           hint="write KEY=VALUE lines for the secret names the workloads declare")
    from engine.ledger.store import Ledger

    with Ledger.open(project.key) as ledger:  # where the workloads run: `env deploy --namespace` recorded
        namespace = namespace_of(project, env, spec, ledger)
    manifests, missing = secret_manifests(spec, namespace, read_dotenv(path), project.key)
    if missing:
        raise InvalidInput(f"{path.relative_to(project.root)} lacks {', '.join(missing)}; nothing applied")
    result = SecretsSyncResult(env=env, context=context, namespace=namespace, provider="dotenv",
                               secrets=[{"name": m["metadata"]["name"], "keys": sorted(m["stringData"])}
                                        for m in manifests])
    if not manifests:
        result.message = "no workload declares secrets: nothing to sync"
        return result
    kube = check_k8s(target)
    ns_doc = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    try:
        kube.apply([ns_doc, *manifests], prune_set=None, namespace=namespace)
    except EngineError as exc:  # kubectl's message could echo an object: keep only the first line
        raise EngineError(exc.message.splitlines()[0], code=exc.code, exit_code=exc.exit_code) from None
    result.applied = True
    result.message = f"applied {len(manifests)} Secret(s) to {context}/{namespace}"
    return result
