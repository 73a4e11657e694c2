"""The K8sCluster apply's kubectl, started at process start with the objects an identical deploy
rendered before (docs/reference-k8s.md#the-render-cache).

An unchanged deploy (`env deploy <env> <version> --yes`) renders the same objects from the same
inputs every time. After a deploy renders them, the object stream kubectl is given is stored in the
machine ledger home (`runtime/<env>/k8s-render`, 0600, written beside and renamed), under a digest of
every input of that render: framework.yaml, the release record, the environment's KCL evaluation key
(every `.k`/`kcl.mod` file, our KCL package, kcl-lib's version and the derived options: checkout,
branch, digests), `--namespace`, and the rendering code. The next such deploy computes the digest at
start, before pydantic or the KCL evaluation are imported, and on a hit starts kubectl (behind
engine/runtime/k8s.py's GUARD) and writes the stored stream to it at once: kubectl's start and its
OpenAPI reads overlap the interpreter's imports and every stage.

The stored stream is a prediction, never a proof: the deploy takes this kubectl only when it was
started for the same context, namespace and ApplySet, and clears it only when the objects it renders
after the promotion encode to exactly the stream written (K8sRuntime.preload). Anything else (an edit
this digest missed, another cluster) ends that kubectl, its input still open, and a fresh one
applies; a deploy refused or killed first ends it too (`end_unused`, the guard). So a stale entry
costs time, never an object applied. Environments with charts or manifest files (inputs outside the
KCL tree, or remote) store nothing.

Light on purpose (standard library and the engine's light modules): the command imports it before
the deploy engine.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from engine.errors import EngineError
from engine.runtime.k8s import Kube, PendingApply

FORMAT = b"framework k8s-render 1\0"
ENTRY = "k8s-render"
# the code whose output the stored stream is: the render, the derived options and the stream's encoding
_ENGINE = Path(__file__).resolve().parent.parent
CODE = tuple(_ENGINE / p for p in (
    "environments/model.py", "environments/derived.py", "environments/evaluate.py", "environments/options.py",
    "environments/render/pipeline.py", "environments/render/k8s.py", "kcl/evaluate.py", "runtime/k8s.py",
    "runtime/k8s_runtime.py", "runtime/k8s_early.py"))

# (project root, env, version, namespace) -> its digest, computed once per process
_KEYS: dict[tuple[str, str, str, str | None], str] = {}
_STARTED: list[PendingApply] = []  # the kubectl started at process start, until the deploy takes it


def render_key(root: Path, env: str, version: str, namespace: str | None) -> str:
    """The digest of every input of `env`'s render for `version` (module docstring); "" when one
    cannot be read (then nothing is stored or started)."""
    memo = (str(root), env, version, namespace)
    if memo in _KEYS:
        return _KEYS[memo]
    from engine import __version__
    from engine.environments.derived import derived_options
    from engine.environments.files import env_file
    from engine.kcl.evaluate import cache_key
    from engine.names import RELEASE_RE, check
    from engine.paths import code_identity
    from engine.project import Project

    project = Project(root)
    try:
        check(version, "release version", pattern=RELEASE_RE, limit=128)
        release = (project.root / ".framework" / "releases" / f"{version}.json").read_bytes()
        images = json.loads(release).get("images") or {}
        digests = {n: i["digest"] for n, i in images.items() if i.get("kind") == "oci" and i.get("digest")}
        path = env_file(project, env)
        options = derived_options(project, env, image_digests=digests)
        digest = hashlib.sha256(FORMAT)
        for part in (__version__, code_identity(CODE, ("pydantic",)), env, version, namespace or "",
                     cache_key(path, project.kcl_dir, options)):
            digest.update(part.encode() + b"\0")
        digest.update(project.config_path.read_bytes() + b"\0" + release)
    except (EngineError, OSError, ValueError, AttributeError, KeyError, TypeError):
        return ""
    key = _KEYS[memo] = digest.hexdigest()
    return key


def _entry(project_key: str, env: str) -> Path:
    from engine.paths import runtime_dir

    return runtime_dir(project_key, env) / ENTRY


def start_early(root: Path, env: str, version: str, namespace: str | None) -> None:
    """Start kubectl with the stored stream when this deploy's inputs have one (module docstring);
    nothing otherwise, or when one is started already."""
    from engine.names import environment
    from engine.project import Project

    if _STARTED:
        return
    try:
        environment(env)  # a name the deploy will refuse names no entry either
        head, _, stream = _entry(Project(root).key, env).read_bytes().partition(b"\n")
        meta = json.loads(head)
        context, ns, prune_set = str(meta["context"]), str(meta["namespace"]), meta["prune_set"]
        if not stream or not isinstance(prune_set, str | None) or meta.get("release") != version:
            return  # another release's render (a changed deploy) starts nothing
        # started before the digest is computed (~6 ms): kubectl's own start overlaps it; given
        # nothing and ended at once when the digest differs (an input edited since)
        pending = Kube(context).start_apply(prune_set=prune_set, namespace=ns)
    except (EngineError, OSError, ValueError, AttributeError, KeyError, TypeError):
        return
    key = render_key(root, env, version, namespace)
    if not key or meta.get("key") != key:
        pending.cancel()
        return
    pending.preload_stream(stream.decode())
    _STARTED.append(pending)


def take(context: str, prune_set: str | None, namespace: str) -> PendingApply | None:
    """The kubectl started early for exactly this apply, or None (one started for another is ended)."""
    if not _STARTED:
        return None
    pending = _STARTED.pop()
    if pending.kube.context != context or not pending.matches(prune_set=prune_set, namespace=namespace):
        pending.cancel()
        return None
    return pending


def end_unused() -> None:
    """End a kubectl started early and never taken (a deploy refused or failed before its apply)."""
    while _STARTED:
        _STARTED.pop().cancel()


def remember(root: Path, project_key: str, env: str, version: str, namespace: str | None,
             pending: PendingApply) -> None:
    """Store the stream `pending` was given under its inputs' digest, unless it is stored already;
    an unwritable ledger home only costs the next deploy's head start."""
    from engine.paths import atomic_write_bytes

    key = render_key(root, env, version, namespace)
    if not key or pending.preloaded is None:
        return
    path = _entry(project_key, env)
    head = json.dumps({"key": key, "release": version, "context": pending.kube.context, "namespace": pending.namespace,
                       "prune_set": pending.prune_set}, sort_keys=True).encode()
    data = head + b"\n" + pending.preloaded.encode()
    try:
        if path.read_bytes() == data:
            return
    except OSError:
        pass
    try:
        atomic_write_bytes(path, data, 0o600, durable=False)
    except OSError:
        pass
