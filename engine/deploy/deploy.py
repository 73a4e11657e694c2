"""`framework env deploy <env> [version]` (spec 2, Deploy: forms, flags, rules 1-10, exit codes 0-8)."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from engine.deploy.control_plane import check_control_plane
from engine.deploy.plan import DeployPlan, compute_plan
from engine.errors import EngineError, InvalidInput
from engine.ledger.store import Gate, Ledger, PromotionConflict, RolloutInFlight
from engine.project import Project
from engine.releases.store import Release, load_release

Confirm = Callable[[DeployPlan | None, str], bool]
Emit = Callable[[dict[str, Any]], None]


class DeployOptions(BaseModel):
    version: str | None = None
    from_env: str | None = None
    plan: bool = False
    plan_only: bool = False
    yes: bool = False
    approve: str | None = None
    acknowledge_destructive: list[str] = []
    expect_current: str | None = None
    expect_unbound: bool = False
    supersede: bool = False
    gate_file: str | None = None
    wait: bool = True
    timeout: float = 300.0
    stability_window: float = 2.0
    grace: float = 30.0
    dry_run: bool = False
    explain: bool = False
    tag: str | None = None
    namespace: str | None = None
    targets: list[str] = []
    skip_frontend: bool = False
    frontends_only: bool = False
    skip_preflight: bool = False


class DeployResult(BaseModel):
    """The `--json` document's payload (spec 2, deploy JSON fields)."""

    mode: str
    env: str
    target: dict[str, Any]
    current: dict[str, Any]
    deploy_plan: dict[str, Any] | None = None
    next_step: str | None = None
    applied: bool = False
    confirmed: bool = False
    refusal: dict[str, Any] | None = None
    queued: dict[str, Any] | None = None
    promotion: dict[str, Any] | None = None
    appended: bool = False
    release_created: bool = False
    rollout: dict[str, Any] | None = None
    explain: list[str] | None = None
    exit_code: int = Field(default=0, exclude=True)  # carried by the document envelope
    error: dict[str, Any] | None = Field(default=None, exclude=True)


def _refuse(
    result: DeployResult, code: str, message: str, exit_code: int, hint: str | None = None
) -> DeployResult:
    result.refusal = {"code": code, "message": message}
    result.error = {"code": code, "message": message, **({"hint": hint} if hint else {})}
    result.exit_code = exit_code
    return result


def _read_gates(path: str) -> list[Gate]:
    from engine.deploy.gates import gates_from_document

    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"--gate {path}: cannot read gate evidence: {exc}") from exc
    return gates_from_document(doc)


def workload_specs(project: Project, release: Release, workloads: list[dict[str, Any]]) -> list[Any]:
    """Process specs: the release's files laid out byte for byte, the environment's run/env/ports."""
    from engine.paths import ledger_home
    from engine.releases.store import materialize
    from engine.runtime.process import WorkloadSpec

    specs = []
    for w in workloads:
        image = release.images.get(w["name"])
        if not w.get("run"):
            raise InvalidInput(
                f"workload {w['name']!r} declares no `run`; the process runtime runs programs",
                hint='declare run = ["program", "arg"] or deploy it to a K8sCluster/Compose',
            )
        if image is not None and image.get("kind") != "file":
            raise InvalidInput(
                f"workload {w['name']!r} ships an {image.get('kind')} image; the process runtime "
                "runs file artifacts"
            )
        workdir = ledger_home() / "projects" / project.key / "releases" / release.version / w["name"]
        materialize(release, w["name"], workdir)
        specs.append(
            WorkloadSpec(
                name=w["name"],
                run=[str(a) for a in w["run"]],
                env={str(k): str(v) for k, v in (w.get("env") or {}).items()},
                ports=[int(p["port"]) for p in w.get("ports") or []],
                replicas=int(w.get("replicas", 1)),
                health=_health(w),
                digest=(image or {}).get("digest", ""),
                workdir=str(workdir),
            )
        )
    return specs


def _health(workload: dict[str, Any]) -> dict[str, Any] | None:
    """HealthCheck with its port name resolved to a number (the first port's instances use their own)."""
    health = dict(workload.get("health") or {})
    ports = workload.get("ports") or []
    name = health.get("port")
    if isinstance(name, str):
        match = [p for p in ports if p.get("name") == name]
        if not match or match[0] is ports[0]:
            health.pop("port")
        else:
            health["port"] = int(match[0]["port"])
    return health or None


def shape_of(env_doc: dict[str, Any]) -> dict[str, Any]:
    """The declared shape recorded after an apply: kind, workloads, one sha256 per object."""

    def h(obj: Any) -> str:
        return "sha256:" + hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()

    workloads = [w for w in env_doc.get("workloads") or [] if isinstance(w, dict)]
    return {
        "kind": env_doc.get("kind"),
        "workloads": sorted(w["name"] for w in workloads),
        "secret_names": sorted({s for w in workloads for s in w.get("secrets") or []}),
        "objects": {f"workload/{w['name']}": h(w) for w in workloads},
    }


def declared_shape(project: Project, env: str, env_doc: dict[str, Any]) -> dict[str, Any]:
    """The shape `env diff` compares against (engine.environments.shape), or a minimal one if it cannot render."""
    from engine.environments.shape import compute_shape

    try:
        return compute_shape(project, env).model_dump(mode="json")
    except EngineError:
        return shape_of(env_doc)


def deploy(
    project: Project,
    env: str,
    opts: DeployOptions,
    *,
    confirm: Confirm | None = None,
    emit: Emit | None = None,
    progress: Callable[[str], None] | None = None,
) -> DeployResult:
    from engine.environments.evaluate import evaluate_environment

    say = progress or (lambda _m: None)
    mode = "explain" if opts.explain else ("dry_run" if (opts.dry_run or opts.plan or opts.plan_only) else "apply")
    result = DeployResult(
        mode=mode,
        env=env,
        target={"env": env, "release": opts.version},
        current={"promotion_id": None, "release": None},
    )
    version = opts.version
    # rule 1: --frontends-only and --target need a version; --dry-run and --explain do not
    if (
        version is None
        and opts.from_env is None
        and (opts.frontends_only or opts.targets)
        and not (opts.dry_run or opts.explain)
    ):
        return _refuse(
            result,
            "invalid_input",
            "--frontends-only and --target need a version (they deploy part of an existing release)",
            1,
            hint=f"framework env deploy {env} <version> --target <app>",
        )
    if version is not None and opts.from_env is not None:
        return _refuse(result, "invalid_input", "give a version or --from <env>, not both", 1)
    env_doc = evaluate_environment(project, env)
    if opts.frontends_only:
        if not env_doc.get("frontends"):
            return _refuse(result, "invalid_input", "--frontends-only: this environment declares no frontends", 1)
        return _refuse(result, "invalid_input", "--frontends-only: frontends are served by `env up` dev servers; "
                       "the process runtime deploys workloads only", 1)
    if env_doc.get("kind") == "hosted" or env_doc.get("control_plane"):
        check_control_plane(env_doc)  # exit 2: the ledger and convergence live on the control plane
    target = env_doc.get("target") or {}
    workloads = [w for w in env_doc.get("workloads") or [] if isinstance(w, dict)]
    if opts.targets:
        unknown = sorted(set(opts.targets) - {w["name"] for w in workloads})
        if unknown:
            return _refuse(result, "invalid_input", f"unknown workload {unknown[0]!r} for --target", 1)
    # rule 8: preflight (remote targets) runs under --dry-run unless --skip-preflight; applying to those
    # targets is not supported by this version, which check_target says (pointing to `env render`)
    if target.get("type") != "process" and mode in ("apply", "dry_run"):
        from engine.runtime.external import check_target

        check_target(target, env, preflight=mode == "dry_run" and not opts.skip_preflight)

    ledger = Ledger.open(project.key)
    try:
        return _deploy(project, env, env_doc, workloads, opts, ledger, result, confirm, emit, say)
    finally:
        ledger.close()


def _deploy(
    project: Project,
    env: str,
    env_doc: dict[str, Any],
    workloads: list[dict[str, Any]],
    opts: DeployOptions,
    ledger: Ledger,
    result: DeployResult,
    confirm: Confirm | None,
    emit: Emit | None,
    say: Callable[[str], None],
) -> DeployResult:
    from engine.builds.dispatch import cut_release, env_build, prepare_release
    from engine.releases.store import find_release

    current = ledger.current(env)
    result.current = {
        "promotion_id": current.id if current else None,
        "release": current.release if current else None,
    }
    source_id: str | None = None
    sources: dict[str, Any] = {}
    needs_cut = False
    # -- resolve the release --------------------------------------------------------------
    if opts.from_env is not None:
        src = ledger.current(opts.from_env)
        if src is None:
            return _refuse(
                result, "invalid_input", f"--from {opts.from_env}: that environment runs nothing", 1
            )
        source_id = src.id
        release = load_release(project, src.release)
        images = src.images  # exactly what that environment runs: its frozen digests
    elif opts.version is not None:
        release = load_release(project, opts.version)  # unknown version: exit 1
        images = release.images
    else:
        if mode_writes(result):
            say(f"building {env}")
            env_build(project, env, tag=opts.tag, progress=say)
        release, sources = prepare_release(project, workloads, None)
        needs_cut = find_release(project, release.version) is None
        images = release.images
    result.target = {"env": env, "release": release.version, "images": images}
    cur_release = find_release(project, current.release) if current else None
    plan = compute_plan(
        env,
        release.model_dump(mode="json"),
        images,
        current.model_dump(mode="json") if current else None,
        cur_release.model_dump(mode="json") if cur_release else None,
        project.root,
    )
    result.deploy_plan = plan.model_dump(mode="json") if plan else None
    yes_form = f"framework env deploy {env} {release.version} --yes"
    result.next_step = (
        f"framework env deploy {env} {release.version} --approve {plan.digest}" if plan else yes_form
    )
    if result.mode == "explain":
        result.explain = _explain(env, release, plan, current, needs_cut, opts)
        return result
    if result.mode == "dry_run" and not opts.plan_only:
        return result
    # Forms: the auto-named release is cut before confirmation is asked, so that the `next_step` of a
    # refusal (exit 5) or a --plan-only stage names a release that exists, and a rerun reuses it
    if needs_cut:
        release, result.release_created = cut_release(project, release, sources)
    if opts.plan_only:
        return result
    # -- compare-and-set preconditions (exit 3) and confirmation ---------------------------
    cur_id = current.id if current else None
    if opts.expect_unbound and cur_id is not None:
        return _refuse(result, "promotion_conflict", f"--expect-unbound: {env} is bound to {cur_id}", 3)
    if opts.expect_current is not None and opts.expect_current != (cur_id or ""):
        return _refuse(
            result,
            "promotion_conflict",
            f"--expect-current {opts.expect_current}: {env} is at {cur_id or 'none'}",
            3,
        )
    if opts.approve is not None:
        if plan is None or opts.approve != plan.digest:
            return _refuse(
                result,
                "promotion_conflict",
                f"--approve {opts.approve}: the live plan's digest is "
                f"{plan.digest if plan else 'nil'}; the environment moved since that plan was read",
                3,
                hint="read the plan again with --plan and approve the new digest",
            )
        result.confirmed = True
    elif opts.yes:
        result.confirmed = True
    elif confirm is None:  # rule 7: no terminal and no --yes -> exit 5, nothing written
        return _refuse(
            result,
            "plan_unconfirmed",
            "no terminal to confirm the plan and no --yes; nothing promoted",
            5,
            hint=f"approve it: {result.next_step}",
        )
    else:
        result.confirmed = confirm(plan, release.version)
        if not result.confirmed:
            result.refusal = {"code": "declined", "message": "confirmation answered no; nothing written"}
            return result
    if plan is not None and plan.stop_codes:
        missing = sorted(set(plan.stop_codes) - set(opts.acknowledge_destructive))
        if missing:
            return _refuse(
                result,
                "destructive_unacknowledged",
                f"the plan has stop-class findings: {', '.join(missing)}",
                1,
                hint=f"pass --acknowledge-destructive {','.join(missing)}",
            )
    gates = _read_gates(opts.gate_file) if opts.gate_file else []
    # -- promote (compare-and-set), apply ----------------------------------------------------
    if opts.from_env is not None and ledger.current_id(opts.from_env) != source_id:
        return _refuse(result, "source_moved", f"--from {opts.from_env}: the source environment moved", 3)
    try:
        if current is not None and current.release == release.version and current.images == images:
            promotion = current  # rule 3: the release already running appends nothing
            apply_seq = ledger.start_apply(env, current.id, release.version, supersede=opts.supersede)
        else:
            direction = plan.direction if plan else "UNKNOWN"
            promotion = ledger.append_promotion(
                env,
                release.version,
                images,
                direction=direction,
                expected_current=cur_id,
                plan_digest=plan.digest if plan else None,
                supersede=opts.supersede,
                gates=gates,
                open_apply=True,
            )
            apply_seq = ledger.last_apply_seq
            result.appended = True
    except PromotionConflict as exc:
        return _refuse(result, exc.code, exc.message, 3, hint=exc.hint)
    except RolloutInFlight as exc:
        return _refuse(result, exc.code, exc.message, 4, hint=exc.hint)
    result.promotion = promotion.model_dump(mode="json")
    result.target["promotion_id"] = promotion.id
    say(
        f"promoted {release.version} to {env} ({promotion.id})"
        if result.appended
        else f"{env} already runs {release.version}; applying and waiting"
    )
    return _apply(
        project, env, env_doc, workloads, release, promotion.id, apply_seq, opts, ledger, result, emit, say
    )


def mode_writes(result: DeployResult) -> bool:
    return result.mode == "apply"


def _apply(
    project: Project,
    env: str,
    env_doc: dict[str, Any],
    workloads: list[dict[str, Any]],
    release: Release,
    promotion_id: str,
    apply_seq: int,
    opts: DeployOptions,
    ledger: Ledger,
    result: DeployResult,
    emit: Emit | None,
    say: Callable[[str], None],
) -> DeployResult:
    from engine.environments.bundles import record_bundle
    from engine.runtime.process import ProcessRuntime, RolloutOptions

    selected = [w for w in workloads if not opts.targets or w["name"] in opts.targets]
    try:
        specs = workload_specs(project, release, selected)
    except EngineError as exc:
        ledger.update_apply(apply_seq, phase="DEGRADED", outcome="failed", finished=True)
        result.applied = False
        return _refuse(result, exc.code, exc.message, 1, hint=exc.hint)
    runtime = ProcessRuntime(project.key, env, release.version, promotion_id)
    # per-workload phases while in flight, so `env status` and the dashboard's Rollouts can show them
    live = {w["name"]: {"name": w["name"], "phase": "pending", "wait_budget": opts.timeout} for w in selected}

    def on_phase(workload: str, phase: str) -> None:
        live.setdefault(workload, {"name": workload, "wait_budget": opts.timeout})["phase"] = phase
        ledger.update_apply(apply_seq, phase=phase, resources=list(live.values()))
        say(f"{workload}: {phase}")
        if emit:
            emit(
                {
                    "event": "rollout_phase",
                    "env": env,
                    "workload": workload,
                    "phase": phase,
                    "promotion_id": promotion_id,
                    "at": time.time(),
                }
            )

    def superseded() -> bool:  # a newer promotion landed, or an explicit --supersede replaced this rollout
        return ledger.current_id(env) != promotion_id or ledger.apply_superseded(apply_seq)

    options = RolloutOptions(
        wait=opts.wait, timeout=opts.timeout, stability_window=opts.stability_window, grace=opts.grace
    )
    phase, resources = runtime.rollout(specs, options, on_phase=on_phase, superseded=superseded)
    result.applied = True
    result.rollout = {"phase": phase, "resources": [{**r.model_dump(), "wait_budget": opts.timeout} for r in resources]}
    outcome = {
        "ready": "ready",
        "not_waited": "not_waited",
        "DEGRADED": "failed",
        "SUPERSEDED": "superseded",
        "timed_out": "timed_out",
    }[phase]
    ledger.update_apply(
        apply_seq, phase=phase, outcome=outcome, resources=result.rollout["resources"], finished=True
    )
    if phase in ("ready", "not_waited"):
        record_bundle(project.key, env, declared_shape(project, env, env_doc))
        return result
    if phase == "DEGRADED":
        failed = [r for r in resources if r.phase == "DEGRADED"]
        return _refuse(
            result,
            "degraded",
            f"rollout DEGRADED: {failed[0].name}: {failed[0].message}" if failed else "rollout DEGRADED",
            1,
        )
    if phase == "SUPERSEDED":
        return _refuse(result, "superseded", "a newer promotion landed during the wait (SUPERSEDED)", 6)
    return _refuse(
        result,
        "wait_timed_out",
        f"wait budget of {opts.timeout:g}s expired while the rollout was progressing",
        8,
        hint=f"see `framework env status {env} --wait`",
    )


def _explain(
    env: str, release: Release, plan: DeployPlan | None, current: Any, needs_cut: bool, opts: DeployOptions
) -> list[str]:
    steps = []
    steps.append(
        f"release {release.version} would be "
        + ("cut from this checkout" if needs_cut else "used as recorded")
    )
    if plan is None:
        steps.append("no plan can be computed: the running release is not known to this checkout")
    elif plan.direction == "SAME":
        steps.append(
            f"{env} already runs {release.version}: nothing would be appended; it would still apply and wait"
        )
    else:
        steps.append(
            f"a promotion would be appended ({plan.direction}) by compare-and-set on "
            f"{plan.current_promotion_id or 'an unbound environment'}"
        )
    steps.append(
        "the process runtime would start each workload and wait for health"
        if opts.wait
        else "the process runtime would start each workload without waiting"
    )
    if not opts.yes and opts.approve is None:
        steps.append("without --yes or --approve, a terminal would ask for confirmation; without one, exit 5")
    return steps
