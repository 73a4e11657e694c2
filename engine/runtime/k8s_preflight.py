"""Deploy preflight for remote clusters (deploy rule 8,
docs/reference-k8s.md#env-deploy-env-version-on-a-k8scluster): before the first apply, and under `--dry-run`,
every secret key the rendered objects reference is provisioned in the cluster, and every image reference
resolves in its registry. Findings name the object and the key or image.

Secret values are never read into the report: only the key names of each Secret are compared.
Images are read as `release verify` reads them (registry HTTP API v2 manifest HEAD;
`FRAMEWORK_INSECURE_REGISTRIES` names plain-HTTP hosts), anonymously first; a registry answering 401
is answered with the credential `registry login` stored for its host in docker's config.json (Basic,
or a Bearer token fetched from the challenge's realm with it), as docker pulls. Never printed.
"""

from __future__ import annotations

from typing import Any

from engine.environments.model import Target
from engine.project import Project
from engine.runtime.k8s import WORKLOAD_KINDS, check_k8s


def _pod_spec(obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj.get("spec") or {}
    return ((spec.get("template") or {}).get("spec")) or {}


def secret_refs(objects: list[dict[str, Any]]) -> list[tuple[str, str, str, str | None]]:
    """(object, namespace, secret, key or None for a whole-Secret envFrom) per reference."""
    out = []
    for obj in objects:
        if obj.get("kind") not in WORKLOAD_KINDS:
            continue
        label = f"{obj['kind']}/{obj['metadata']['name']}"
        ns = obj["metadata"].get("namespace") or "default"
        pod = _pod_spec(obj)
        for c in (pod.get("containers") or []) + (pod.get("initContainers") or []):
            for e in c.get("env") or []:
                ref = (e.get("valueFrom") or {}).get("secretKeyRef")
                if ref and not ref.get("optional"):
                    out.append((label, ns, ref["name"], ref["key"]))
            for e in c.get("envFrom") or []:
                ref = e.get("secretRef")
                if ref and not ref.get("optional"):
                    out.append((label, ns, ref["name"], None))
    return out


def images_of(objects: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(object, image reference) per container."""
    out = []
    for obj in objects:
        if obj.get("kind") in WORKLOAD_KINDS:
            pod = _pod_spec(obj)
            for c in (pod.get("containers") or []) + (pod.get("initContainers") or []):
                out.append((f"{obj['kind']}/{obj['metadata']['name']}", c["image"]))
    return out


def _image_check(client: Any, image: str) -> tuple[str, str]:
    from engine.registry.login import stored_credential
    from engine.releases.images import parse_image
    from engine.releases.store import Artifact
    from engine.releases.verify import oci_manifest

    ref, _, digest = image.partition("@")
    if not digest:  # a tag: the manifest at that tag
        last = ref.rsplit("/", 1)[-1]
        ref, digest = (ref.rsplit(":", 1)[0], ref.rsplit(":", 1)[1]) if ":" in last else (ref, "latest")
    try:
        auth = stored_credential(parse_image(ref).host)
        outcome, detail = oci_manifest(client, Artifact(workload="", kind="oci", coordinate=ref, digest=digest),
                                       auth=auth)
    except Exception as exc:  # noqa: BLE001 - any transport failure: the registry is unreachable
        return "UNREACHABLE", f"{type(exc).__name__}: {exc}"
    return outcome, detail


def run_preflight(project: Project, env: str, target: Target, images: dict[str, Any], *,
                  timeout: float = 10.0) -> dict[str, Any]:
    """{"checks": {secret_keys, images}, "findings": [{object, kind, key|image, message}]}."""
    import httpx

    from engine.runtime.k8s_runtime import render_release

    kube = check_k8s(target)
    _, manifests = render_release(project, env, images, target.namespace)
    findings: list[dict[str, Any]] = []
    refs = secret_refs(manifests)
    keys: dict[tuple[str, str], set[str]] = {}
    for ns in sorted({r[1] for r in refs}):
        for s in kube.get("secrets", ns):
            keys[(ns, s["metadata"]["name"])] = set((s.get("data") or {}).keys())
    for obj, ns, secret, key in refs:
        have = keys.get((ns, secret))
        if have is None:
            findings.append({"object": obj, "kind": "secret", "secret": secret, "key": key,
                             "message": f"Secret {ns}/{secret} does not exist" + (f" (key {key})" if key else "")})
        elif key is not None and key not in have:
            findings.append({"object": obj, "kind": "secret", "secret": secret, "key": key,
                             "message": f"Secret {ns}/{secret} has no key {key}"})
    refs_images = images_of(manifests)
    with httpx.Client(timeout=timeout, follow_redirects=True) as client:
        for obj, image in refs_images:
            outcome, detail = _image_check(client, image)
            if outcome != "VERIFIED":
                login = f"; store a credential with `framework registry login {env}`" \
                    if "refused anonymous access" in detail else ""
                findings.append({"object": obj, "kind": "image", "image": image,
                                 "message": f"image {image} does not resolve ({outcome}): {detail}{login}"})
    return {"context": target.context, "checks": {"secret_keys": len(refs), "images": len(refs_images)},
            "findings": findings}
