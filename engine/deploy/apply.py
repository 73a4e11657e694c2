"""The last stages of `env deploy` (docs/reference-deploy.md#env-deploy): apply on the environment's runtime (process,
k8s or compose), wait, record.

Per-workload phases are written to the open apply while in flight (`env status` and the
dashboard's Rollouts read them); the outcome closes it; a good apply records the declared shape
as the environment's bundle (what `env diff` compares against).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from engine.deploy.deployment import Deployment, DeployResult
from engine.environments.model import Workload
from engine.errors import EngineError, InvalidInput
from engine.project import Project
from engine.releases.store import Release

PHASE_WRITE_INTERVAL = 0.05  # seconds: phase changes closer together than this share one ledger write
WRITE_POLL = 0.05  # seconds between looks while a superseded rollout is still writing to the runtime

if TYPE_CHECKING:
    from engine.environments.bundles import StagedBundle
    from engine.runtime.process import Phase, Resource, RolloutEnd, RolloutOptions, WorkloadSpec, Writing


class Rollout(Protocol):
    """What the deploy engine needs of a runtime: the resources it will roll out, and the rollout."""

    @property
    def names(self) -> list[str]: ...

    @property
    def namespace(self) -> str | None: ...  # a cluster runtime's namespace, recorded on the apply

    def rollout(self, options: RolloutOptions, *, on_phase: Callable[[str, Phase], None],
                superseded: Callable[[], bool], meanwhile: Callable[[], None] | None = None,
                writing: Writing = ...) -> tuple[RolloutEnd, list[Resource]]: ...

# the rollout's phase -> the apply's recorded outcome (the rollout outcome per resource)
OUTCOMES: dict[str, str] = {
    "ready": "ready",
    "not_waited": "not_waited",
    "DEGRADED": "failed",
    "SUPERSEDED": "superseded",
    "timed_out": "timed_out",
}


def workload_specs(project: Project, release: Release, workloads: list[Workload]) -> list[WorkloadSpec]:
    """Process specs: the release's files laid out byte for byte, the environment's run/env/ports."""
    from engine.paths import ledger_home
    from engine.releases.store import materialize
    from engine.runtime.process import WorkloadSpec

    specs = []
    for w in workloads:
        image = release.images.get(w.name)
        if not w.run:
            raise InvalidInput(
                f"workload {w.name!r} declares no `run`; the process runtime runs programs",
                hint='declare run = ["program", "arg"] or deploy it to a K8sCluster/Compose',
            )
        if image is not None and image.get("kind") != "file":
            raise InvalidInput(
                f"workload {w.name!r} ships an {image.get('kind')} image; the process runtime "
                "runs file artifacts"
            )
        workdir = ledger_home() / "projects" / project.key / "releases" / release.version / w.name
        materialize(release, w.name, workdir)
        specs.append(
            WorkloadSpec(
                name=w.name,
                run=list(w.run),
                env=dict(w.env),
                ports=[p.port for p in w.ports],
                replicas=w.replicas,
                health=w.health_spec(),
                digest=(image or {}).get("digest", ""),
                workdir=str(workdir),
            )
        )
    return specs


class _ProcessRollout:
    """The process runtime behind the one rollout interface the deploy engine calls."""

    def __init__(self, d: Deployment, promotion_id: str, selected: list[Workload]) -> None:
        from engine.runtime.process import ProcessRuntime

        assert d.release is not None
        self.specs = workload_specs(d.project, d.release, selected)
        self.runtime = ProcessRuntime(d.project.key, d.env, d.release.version, promotion_id)
        self.names = [w.name for w in selected]
        self.declared = {w.name for w in d.workloads}  # --target: the others keep running as they are
        self.namespace: str | None = None

    def rollout(self, options: RolloutOptions, *, on_phase: Callable[[str, Phase], None],
                superseded: Callable[[], bool], meanwhile: Callable[[], None] | None = None,
                writing: Writing | None = None) -> tuple[RolloutEnd, list[Resource]]:
        from engine.runtime.process import unguarded

        return self.runtime.rollout(self.specs, options, on_phase=on_phase, superseded=superseded,
                                    declared=self.declared, writing=writing or unguarded)


def _runtime(d: Deployment, promotion_id: str) -> Rollout:
    """The runtime the environment's target names: `process` (this machine), `k8s` (its context) or
    `compose` (the Docker daemon Compose talks to)."""
    selected = [w for w in d.workloads if not d.opts.targets or w.name in d.opts.targets]
    if d.spec.runtime == "k8s":
        from engine.runtime.k8s import PendingApply
        from engine.runtime.k8s_runtime import K8sRuntime

        pending, d.kubectl = d.kubectl, None
        return K8sRuntime.for_deploy(d.project, d.env, d.spec, d.images, d.opts.targets,
                                     pending=pending if isinstance(pending, PendingApply) else None)
    if d.spec.runtime == "compose":
        from engine.runtime.compose import ComposeRuntime, PendingUp

        early, d.kubectl = d.kubectl, None
        return ComposeRuntime(d.project, d.env, d.spec, d.images, d.opts.targets,
                              pending=early if isinstance(early, PendingUp) else None)
    return _ProcessRollout(d, promotion_id, selected)


def apply_and_record(d: Deployment, promotion_id: str, apply_seq: int) -> DeployResult:
    """Apply on the environment's runtime, wait within the budget, close the apply with its outcome."""
    from engine.runtime.process import RolloutOptions

    opts, ledger, result, release = d.opts, d.ledger.machine, d.result, d.release
    assert release is not None and ledger is not None  # hosted: engine.deploy.hosted_wait
    try:
        runtime = _runtime(d, promotion_id)
    except EngineError as exc:
        ledger.update_apply(apply_seq, phase="DEGRADED", outcome="failed", finished=True)
        result.applied = False
        return d.refuse(exc.code, exc.message, exc.exit_code if exc.exit_code != 0 else 1, hint=exc.hint)
    live: dict[str, dict[str, Any]] = {
        n: {"name": n, "phase": "pending", "wait_budget": opts.timeout} for n in runtime.names
    }

    # Phase records are coalesced: a burst of changes (50 workloads found ready by the apply's own
    # answer) is one ledger write, not one each; whatever is pending is written before the runtime's
    # next look at the ledger (superseded) and before the apply is closed.
    pending: list[Phase] = []
    seen: list[tuple[str, str, float]] = []  # phase records not yet written: (workload, phase, at)
    last_write = [0.0]

    namespace = runtime.namespace  # recorded with the apply's first write: `env status` reads it there

    def flush() -> None:
        if pending:
            ledger.update_apply(apply_seq, phase=pending[-1], resources=list(live.values()), namespace=namespace,
                                transitions=seen)
            pending.clear()
            seen.clear()
            last_write[0] = time.monotonic()

    def on_phase(workload: str, phase: Phase) -> None:
        live.setdefault(workload, {"name": workload, "wait_budget": opts.timeout})["phase"] = phase
        pending.append(phase)
        seen.append((workload, phase, time.time()))
        if time.monotonic() - last_write[0] >= PHASE_WRITE_INTERVAL:
            flush()
        d.say(f"{workload}: {phase}")
        if d.emit:
            d.emit({"event": "rollout_phase", "env": d.env, "workload": workload, "phase": phase,
                    "promotion_id": promotion_id, "at": time.time()})

    def superseded() -> bool:  # a newer promotion landed, or an explicit --supersede replaced this rollout
        flush()
        return ledger.current_id(d.env) != promotion_id or ledger.apply_superseded(apply_seq)

    options = RolloutOptions(
        wait=opts.wait, timeout=opts.timeout, stability_window=opts.stability_window, grace=opts.grace
    )
    writing = write_order(d, promotion_id, apply_seq, flush)
    staged: list[StagedBundle] = []

    def meanwhile() -> None:  # while kubectl applies: the bundle a good apply records, written aside
        from engine.environments.bundles import StagedBundle

        staged.append(StagedBundle(d.project.key, d.env, d.declared_shape()))

    try:
        try:
            phase, resources = runtime.rollout(options, on_phase=on_phase, superseded=superseded,
                                               meanwhile=meanwhile, writing=writing)
        except EngineError as exc:  # the apply itself failed (kubectl refused, cluster unreachable: exit 2)
            flush()
            ledger.update_apply(apply_seq, phase="DEGRADED", outcome="failed", finished=True, namespace=namespace)
            return d.refuse(exc.code, exc.message, exc.exit_code, hint=exc.hint)
        except BaseException:
            flush()
            raise
        result.applied = True  # pending phase records: _record writes every resource's final state
        result.rollout = {"phase": phase, "resources": [
            {**r.model_dump(exclude_none=True), "wait_budget": opts.timeout} for r in resources]}
        return _record(d, apply_seq, phase, resources, staged[0] if staged else None, namespace, seen)
    finally:
        for bundle in staged:
            bundle.discard()  # a no-op once committed


def write_order(d: Deployment, promotion_id: str, apply_seq: int, flush: Callable[[], None]) -> Writing:
    """The deploy's ordering of runtime writes (docs/reference-deploy.md#supersede), one for every runtime:
    each write of this apply waits while a rollout it superseded is still writing (its record says so
    and its process lives), at most the wait budget (`--timeout`; then exit 4
    `superseded_still_applying`, nothing applied); and a superseded apply never writes again: the mark
    is read in the transaction the `--supersede` writes it in, before each write."""
    import contextlib

    from engine.promotions.rules import SupersededStillApplying

    ledger = d.ledger.machine
    assert ledger is not None

    @contextlib.contextmanager
    def writing() -> Iterator[bool]:
        flush()
        deadline = time.monotonic() + d.opts.timeout
        told = False
        while True:
            state, writers = ledger.begin_write(d.env, apply_seq)
            if state != "wait":
                break
            pids = ", ".join(str(w.pid) for w in writers)
            if not told:
                told = True
                d.say(f"waiting for the superseded rollout (pid {pids}) to finish applying")
                if d.emit:
                    d.emit({"event": "supersede_wait", "env": d.env, "promotion_id": promotion_id,
                            "pids": [w.pid for w in writers], "at": time.time()})
            if time.monotonic() > deadline:
                raise SupersededStillApplying(
                    f"the rollout this deploy supersedes (pid {pids}) was still applying to the runtime after "
                    f"{d.opts.timeout:g}s (--timeout); nothing of this deploy was applied",
                    hint=f"deploy again with --supersede once it has answered (`framework env status {d.env}`), "
                         "or stop that process")
            time.sleep(WRITE_POLL)
        if state == "stop":
            yield False
            return
        try:
            yield True
        finally:
            ledger.end_write(apply_seq)

    return writing


def _record(d: Deployment, apply_seq: int, phase: RolloutEnd, resources: list[Resource],
            staged: StagedBundle | None, namespace: str | None,
            transitions: list[tuple[str, str, float]]) -> DeployResult:
    """Close the apply with its outcome; the exit code follows it (1 DEGRADED, 6 SUPERSEDED, 8 timed out)."""
    result = d.result
    ledger = d.ledger.machine
    assert result.rollout is not None and ledger is not None
    ledger.update_apply(apply_seq, phase=phase, outcome=OUTCOMES[phase], resources=result.rollout["resources"],
                        finished=True, namespace=namespace, transitions=transitions)
    if phase in ("ready", "not_waited"):
        if staged is not None:
            staged.commit()
        else:
            from engine.environments.bundles import record_bundle

            record_bundle(d.project.key, d.env, d.declared_shape())
        return result
    if phase == "DEGRADED":
        failed = [r for r in resources if r.phase == "DEGRADED"]
        return d.refuse(
            "degraded",
            f"rollout DEGRADED: {failed[0].name}: {failed[0].message}" if failed else "rollout DEGRADED",
            1,
        )
    if phase == "SUPERSEDED":
        return d.refuse("superseded", "a newer promotion landed during the wait (SUPERSEDED)", 6)
    return d.refuse(
        "wait_timed_out",
        f"wait budget of {d.opts.timeout:g}s expired while the rollout was progressing",
        8,
        hint=f"see `framework env status {d.env} --wait`",
    )
