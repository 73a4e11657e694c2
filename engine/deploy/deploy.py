"""`framework env deploy <env> [version]` (docs/reference-deploy.md#env-deploy: forms, flags, exit codes 0-8).

A deploy evaluates (renders) its environment once, then runs the spec's stages in order, each a
function of one `Deployment`: resolve the release, plan, cut, confirm, promote, and apply and
record (engine/deploy/apply.py). A stage that refuses returns the finished result.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.deploy.deployment import Confirm, Deployment, DeployOptions, DeployResult, Emit, Mode, refuse
from engine.errors import EngineError, InvalidInput
from engine.progress import Reporter

if TYPE_CHECKING:  # the stages import what they use: a K8sCluster deploy starts kubectl before them
    from engine.environments.model import EnvironmentSpec
    from engine.ledger.hosted import HostedLedger
    from engine.ledger.store import Gate, Promotion
    from engine.project import Project


_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


def _read_gates(path: str) -> list[Gate]:
    from engine.deploy.gates import gates_from_document

    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"--gate {path}: cannot read gate evidence: {exc}") from exc
    return gates_from_document(doc)


def _mode(opts: DeployOptions) -> Mode:
    if opts.explain:
        return "explain"
    return "dry_run" if (opts.dry_run or opts.plan or opts.plan_only) else "apply"


def _evaluate(project: Project, env: str, namespace: str | None = None
              ) -> tuple[EnvironmentSpec, Callable[[], dict[str, Any]]]:
    """The environment, rendered once; and the declared shape a good apply records from that render.

    An environment that evaluates but does not render (a placeholder left, a file written, a name
    that does not match its directory) still deploys on the process runtime: its shape is then the
    minimal one (`shape_of`), as `env diff` documents."""
    from engine.environments.evaluate import environment_spec, evaluate_document
    from engine.environments.render.pipeline import render_environment, with_namespace

    try:
        rendered = render_environment(project, env, fail_on_write=True, namespace=namespace)
    except EngineError:
        doc = evaluate_document(project, env)  # raises the evaluation's own error, if that is what failed
        return with_namespace(environment_spec(project, env, doc), namespace), lambda: shape_of(doc)
    shape: list[dict[str, Any]] = []  # read once (its git reads), possibly while kubectl applies

    def declared() -> dict[str, Any]:
        if not shape:
            from engine.environments.shape import shape_of_rendered

            shape.append(shape_of_rendered(project, env, rendered).model_dump(mode="json"))
        return shape[0]

    return rendered.environment, declared


def deploy(
    project: Project,
    env: str,
    opts: DeployOptions,
    *,
    confirm: Confirm | None = None,
    emit: Emit | None = None,
    progress: Callable[[str], None] | None = None,
    report: Reporter | None = None,
) -> DeployResult:
    mode = _mode(opts)
    result = DeployResult(
        mode=mode,
        env=env,
        target={"env": env, "release": opts.version},
        current={"promotion_id": None, "release": None},
    )
    # rule 1: --frontends-only and --target need a version; --dry-run and --explain do not
    if (
        opts.version is None
        and opts.from_env is None
        and (opts.frontends_only or opts.targets)
        and not (opts.dry_run or opts.explain)
    ):
        return refuse(
            result,
            "invalid_input",
            "--frontends-only and --target need a version (they deploy part of an existing release)",
            1,
            hint=f"framework env deploy {env} <version> --target <app>",
        )
    if opts.version is not None and opts.from_env is not None:
        return refuse(result, "invalid_input", "give a version or --from <env>, not both", 1)
    if opts.namespace is not None and not _DNS_LABEL.fullmatch(opts.namespace):
        return refuse(result, "invalid_input", f"--namespace {opts.namespace!r} is not a Kubernetes namespace name "
                      "(lowercase letters, digits and '-', at most 63, starting and ending alphanumeric)", 1)
    spec, declared = _evaluate(project, env, opts.namespace)
    if opts.namespace is not None and (spec.target is None or spec.target.type != "k8s" or spec.on_control_plane):
        return refuse(result, "invalid_input", "--namespace applies to an environment deploying to a Kubernetes "
                      "cluster (framework.K8sCluster) from this machine", 1)
    from engine.environments.bindings import first_unhonoured

    unhonoured = first_unhonoured(spec)
    if unhonoured is not None:  # a binding is placed where it says, or refused; never deployed elsewhere
        return refuse(result, "binding_unsupported", f"cannot deploy {env}: {unhonoured}", 1,
                      hint="see docs/reference-env.md (bindings)")
    refused = _frontend_flags(result, spec, opts)
    if refused is not None:
        return refused
    if opts.targets:
        unknown = sorted(set(opts.targets) - {w.name for w in spec.workloads})
        if unknown:
            return refuse(result, "invalid_input", f"unknown workload {unknown[0]!r} for --target", 1)
        if spec.on_control_plane:  # the control plane converges a promotion's whole release
            return refuse(result, "invalid_input", "--target: a hosted environment is converged as a whole by "
                          "its control plane; deploy without --target (`env stop|start --target` scope it)", 1)
    # rule 9: a K8sCluster applies to exactly its declared context; missing -> refused before anything
    # is written. Compose: the CLI and a daemon must answer (a dry run skips it with --skip-preflight)
    kubectl = None
    if spec.target is not None and spec.target.type == "k8s" and mode in ("apply", "dry_run"):
        from engine.runtime.k8s import check_k8s

        kube = check_k8s(spec.target)
        if (mode == "apply" and (opts.yes or opts.approve is not None) and not opts.frontends_only
                and not spec.on_control_plane):
            kubectl = _start_apply(project, env, spec, opts, kube)
    elif (spec.target is not None and spec.target.type == "compose" and mode in ("apply", "dry_run")
          and not (mode == "dry_run" and opts.skip_preflight)):
        from engine.runtime.compose import check_compose, start_up

        cli = check_compose()
        if mode == "apply" and (opts.yes or opts.approve is not None) and not opts.frontends_only:
            kubectl = start_up(project, env, spec, cli, opts.targets)  # its start overlaps the stages

    from engine.ledger.protocol import open_ledger

    try:
        with open_ledger(project, env, spec) as ledger:  # rule 4: hosted -> the control plane (exit 2 unreachable)
            d = Deployment(project, env, spec, declared, opts, ledger, result, confirm, emit,
                           progress or (lambda _m: None), kubectl=kubectl, report=report)
            return _stages(d)
    finally:
        if kubectl is not None:
            kubectl.cancel()  # refused before the apply: kubectl (compose) was sent nothing and changed nothing
        if spec.target is not None and spec.target.type == "compose":
            from engine.runtime.compose_early import end_unused

            end_unused()


def _frontend_flags(result: DeployResult, spec: EnvironmentSpec, opts: DeployOptions) -> DeployResult | None:
    """--frontends-only and --skip-frontend on each target (docs/reference-frontends.md#deploying-frontends).
    Only an environment on a control plane deploys frontends (its releases carry their output); elsewhere
    `env up`'s dev servers serve them, so --frontends-only is refused and --skip-frontend has nothing to skip.
    On a control plane both are checked against the release once it is resolved (`_frontend_scope`)."""
    where = f"`env deploy` on the {spec.runtime} runtime deploys no frontends (`env up` serves them)"
    if opts.frontends_only:
        if not spec.frontends:
            return refuse(result, "invalid_input", "--frontends-only: this environment declares no frontends", 1)
        if not spec.on_control_plane:
            return refuse(result, "invalid_input", f"--frontends-only is not supported: {where}", 1)
        return None
    if not opts.skip_frontend:
        return None
    if not spec.frontends:
        result.notices.append(f"--skip-frontend: {spec.name} declares no frontends; nothing to skip")
    elif not spec.on_control_plane:
        result.notices.append(f"--skip-frontend: {where}; nothing to skip")
    return None


def _frontend_scope(d: Deployment) -> DeployResult | None:
    """A control plane serves a promoted release whole: its workloads and its frontends' files together.
    So the flags say which part may change, and are honoured exactly when the release agrees:
    --skip-frontend keeps the served frontend bundle (the release's frontend files equal the running
    release's), --frontends-only keeps the workloads (the release's workload images equal the running
    ones). Otherwise refused (exit 1), naming what differs; nothing is uploaded or promoted."""
    opts, spec = d.opts, d.spec
    if not spec.on_control_plane or not spec.frontends or not (opts.skip_frontend or opts.frontends_only):
        return None
    flag = "--skip-frontend" if opts.skip_frontend else "--frontends-only"
    if d.current is None:
        return d.refuse("invalid_input", f"{flag}: {d.env} runs no release yet, so there is nothing to keep; "
                        "deploy without it", 1)
    fronts = {f.name for f in spec.frontends}
    kept = sorted(fronts if opts.skip_frontend else set(d.images) - fronts)
    running = d.current.images
    differ = [n for n in kept if (d.images.get(n) or {}).get("digest") != (running.get(n) or {}).get("digest")]
    what = "frontend files" if opts.skip_frontend else "workload images"
    if differ:
        return d.refuse("invalid_input", f"{flag} cannot be honoured: the control plane serves a release whole, and "
                        f"{d.release.version if d.release else 'this release'} carries other {what} than the running "
                        f"release {d.current.release} for {', '.join(differ)}", 1,
                        hint=f"deploy without {flag}, or a release whose {what} match the running ones")
    d.result.notices.append(f"{flag}: the release carries the same {what} as the running release "
                            f"{d.current.release}; they stay as they are")
    return None


def _hosted(d: Deployment) -> HostedLedger | None:
    """The control plane's ledger of a hosted environment (rule 4), else None (the machine's)."""
    return d.ledger.hosted


def _start_apply(project: Project, env: str, spec: EnvironmentSpec, opts: DeployOptions, kube: Any) -> Any:
    """The K8sCluster apply's kubectl, started as soon as the context is checked: its start overlaps
    the stages up to the promotion, after which it is sent the objects (engine/runtime/k8s.py,
    PendingApply). Only for a deploy approved on its command line (a terminal's question could
    take minutes); a deploy refused before its apply cancels it."""
    from engine.runtime import k8s_early
    from engine.runtime.k8s import applyset_name
    from engine.runtime.k8s_status import namespace_of

    prune_set = None if opts.targets else applyset_name(env)
    namespace = namespace_of(project, env, spec)
    # started at process start with a stored render (engine/runtime/k8s_early.py), else now
    pending = (k8s_early.take(kube.context, prune_set, namespace)
               or kube.start_apply(prune_set=prune_set, namespace=namespace))
    if opts.version is not None and opts.from_env is None and not opts.targets:
        try:
            pending = _preload(project, env, spec, opts, pending)
        except BaseException:
            pending.cancel()  # nothing cleared: kubectl ends, having applied nothing
            raise
    return pending


def _preload(project: Project, env: str, spec: EnvironmentSpec, opts: DeployOptions, pending: Any) -> Any:
    """The named release's objects, written to the early kubectl before the stages run: kubectl reads
    them (their kinds' OpenAPI documents, ~90 ms) meanwhile, and applies them only once the apply
    clears the same objects after the promotion (docs/reference-k8s.md#env-deploy-env-version-on-a-k8scluster).
    Anything amiss here is left to the stages, which report it; other objects there replace this kubectl.
    The kubectl to use: a fresh one when the one started with a stored render holds other objects; the
    stream given is stored for the next deploy of the same inputs (engine/runtime/k8s_early.py)."""
    from engine.releases.store import load_release
    from engine.runtime import k8s_early
    from engine.runtime.k8s_runtime import K8sRuntime

    assert opts.version is not None
    stored = pending.preloaded is not None  # given the stored render at process start
    try:
        release = load_release(project, opts.version)
        runtime = K8sRuntime.for_deploy(project, env, spec, release.images, [], pending=pending)
    except (EngineError, OSError, ValueError):
        return pending
    used = runtime.preload(pending, release.images)
    if not spec.charts and not any(isinstance(m, str) for w in spec.workloads for m in w.manifests) and (
            used is not pending or not stored):  # inputs outside the KCL tree are not in its digest
        k8s_early.remember(project.root, project.key, env, opts.version, opts.namespace, used)
    return used


def _stages(d: Deployment) -> DeployResult:
    """The deploy's stages: resolve, plan, cut, confirm, promote, apply and record."""
    from engine.deploy.apply import apply_and_record

    refused = _resolve(d) or _frontend_scope(d)
    if refused is not None:
        return refused
    _plan(d)
    result = d.result
    refused = _preflight(d)
    if refused is not None:
        return refused
    if result.mode == "explain":
        result.explain = _explain(d)
        return result
    if result.mode == "dry_run" and not d.opts.plan_only:
        return result
    assert d.release is not None
    # Forms: the auto-named release is cut before confirmation is asked, so that the `next_step` of a
    # refusal (exit 5) or a --plan-only stage names a release that exists, and a rerun reuses it
    if d.needs_cut:
        from engine.builds.dispatch import cut_release

        d.release, result.release_created = cut_release(d.project, d.release, d.sources)
    if d.opts.plan_only:
        return result
    refused = _confirm(d)
    if refused is not None:
        return refused
    hosted = _hosted(d)
    if hosted is not None:  # the control plane stores the release before it is promoted
        hosted.upload_release(d.release, d.report)
    promoted = _promote(d)
    if isinstance(promoted, DeployResult):
        return promoted
    promotion, apply_seq = promoted
    if hosted is not None:
        from engine.deploy.hosted_wait import hosted_converge

        return hosted_converge(d, promotion.id)
    return apply_and_record(d, promotion.id, apply_seq)


def _resolve(d: Deployment) -> DeployResult | None:
    """Which release, and exactly which images: a version's, another environment's, or a new cut's."""
    from engine.releases.store import find_release, load_release

    opts = d.opts
    d.current = current = d.ledger.current(d.env)
    d.result.current = {
        "promotion_id": current.id if current else None,
        "release": current.release if current else None,
    }
    if opts.from_env is not None:
        src = d.ledger.current(opts.from_env)
        if src is None:
            return d.refuse("invalid_input", f"--from {opts.from_env}: that environment runs nothing", 1)
        d.source_id = src.id
        d.release = load_release(d.project, src.release)
        d.images = src.images  # exactly what that environment runs: its frozen digests
    elif opts.version is not None:
        d.release = load_release(d.project, opts.version)  # unknown version: exit 1
        d.images = d.release.images
    else:
        from engine.builds.dispatch import env_build, prepare_release
        from engine.builds.frontends import carried

        if d.result.mode == "apply":
            d.say(f"building {d.env}")
            env_build(d.project, d.env, tag=opts.tag, progress=d.say, spec=d.spec, report=d.report)
        d.release, d.sources = prepare_release(d.project, d.workloads, None, frontends=carried(d.spec))
        d.needs_cut = find_release(d.project, d.release.version) is None
        d.images = d.release.images
    if opts.targets:
        d.images = _covered(d.images, current, opts.targets)
    d.result.target = {"env": d.env, "release": d.release.version, "images": d.images,
                       **({"targets": sorted(opts.targets)} if opts.targets else {})}
    return None


def _covered(images: dict[str, Any], current: Promotion | None, targets: list[str]) -> dict[str, Any]:
    """The images a `--target` promotion freezes: the release's for the selected workloads; for the
    others what the environment runs now (its current promotion's), which the apply leaves as it is."""
    running = current.images if current is not None else {}
    return {name: img if name in targets or name not in running else running[name]
            for name, img in images.items()}


def _preflight(d: Deployment) -> DeployResult | None:
    """Rule 8: before the first apply (and under --dry-run), a remote cluster must hold every secret
    key the objects reference and every image must resolve; --skip-preflight bypasses it."""
    spec, opts = d.spec, d.opts
    if (spec.runtime != "k8s" or spec.target is None or opts.skip_preflight or d.result.mode == "explain"
            or opts.plan or opts.plan_only):
        return None
    from engine.runtime.k8s import is_local

    if is_local(spec.target.context or ""):
        return None
    from engine.runtime.k8s_preflight import run_preflight

    d.result.preflight = report = run_preflight(d.project, d.env, spec.target, d.images)
    if report["findings"]:
        first = report["findings"][0]
        more = len(report["findings"]) - 1
        return d.refuse(
            "preflight_failed",
            f"preflight: {first['object']}: {first['message']}" + (f" (and {more} more)" if more else ""),
            1,
            hint="provision what is missing, or pass --skip-preflight",
        )
    return None


def _plan(d: Deployment) -> None:
    """The change set against what runs, its digest, and the command that approves it (rule 6)."""
    from engine.deploy.plan import compute_plan
    from engine.releases.store import find_release

    assert d.release is not None
    cur_release = find_release(d.project, d.current.release) if d.current else None
    cur_doc = cur_release.model_dump(mode="json") if cur_release else None
    hosted = _hosted(d)
    if cur_doc is None and d.current is not None and hosted is not None:
        cur_doc = hosted.release_doc(d.current.release)  # cut elsewhere: the control plane stores it
    d.plan = plan = compute_plan(
        d.env,
        d.release.model_dump(mode="json"),
        d.images,
        d.current.model_dump(mode="json") if d.current else None,
        cur_doc,
        d.project.root,
    )
    d.result.deploy_plan = plan.model_dump(mode="json") if plan else None
    version = d.release.version
    d.result.next_step = (
        f"framework env deploy {d.env} {version} --approve {plan.digest}"
        if plan
        else f"framework env deploy {d.env} {version} --yes"
    )


def _confirm(d: Deployment) -> DeployResult | None:
    """Compare-and-set preconditions (exit 3), then --approve, --yes or the terminal (rule 7: exit 5)."""
    opts, plan, result = d.opts, d.plan, d.result
    assert d.release is not None
    cur_id = d.current.id if d.current else None
    if opts.expect_unbound and cur_id is not None:
        return d.refuse("promotion_conflict", f"--expect-unbound: {d.env} is bound to {cur_id}", 3)
    if opts.expect_current is not None and opts.expect_current != (cur_id or ""):
        return d.refuse(
            "promotion_conflict", f"--expect-current {opts.expect_current}: {d.env} is at {cur_id or 'none'}", 3
        )
    if opts.approve is not None:
        if plan is None or opts.approve != plan.digest:
            return d.refuse(
                "promotion_conflict",
                f"--approve {opts.approve}: the live plan's digest is "
                f"{plan.digest if plan else 'nil'}; the environment moved since that plan was read",
                3,
                hint="read the plan again with --plan and approve the new digest",
            )
        result.confirmed = True
    elif opts.yes:
        result.confirmed = True
    elif d.confirm is None:  # rule 7: no terminal and no --yes -> exit 5, no promotion written
        return d.refuse(
            "plan_unconfirmed",
            "no terminal to confirm the plan and no --yes; nothing promoted",
            5,
            hint=f"approve it: {result.next_step}",
        )
    else:
        result.confirmed = d.confirm(plan, d.release.version)
        if not result.confirmed:
            result.refusal = {"code": "declined", "message": "confirmation answered no; no promotion written"}
            return result
    if plan is not None and plan.stop_codes:
        missing = sorted(set(plan.stop_codes) - set(opts.acknowledge_destructive))
        if missing:
            return d.refuse(
                "destructive_unacknowledged",
                f"the plan has stop-class findings: {', '.join(missing)}",
                1,
                hint=f"pass --acknowledge-destructive {','.join(missing)}",
            )
    return None


def _promote(d: Deployment) -> tuple[Promotion, int] | DeployResult:
    """Append the promotion by compare-and-set (rule 2), or re-apply the one running (rule 3)."""
    from engine.ledger.store import PromotionConflict, RolloutInFlight

    opts, plan, current, release = d.opts, d.plan, d.current, d.release
    assert release is not None
    gates = _read_gates(opts.gate_file) if opts.gate_file else []
    if opts.from_env is not None and d.ledger.current_id(opts.from_env) != d.source_id:
        return d.refuse("source_moved", f"--from {opts.from_env}: the source environment moved", 3)
    try:
        if current is not None and current.release == release.version and current.images == d.images:
            promotion = current  # rule 3: the release already running appends nothing
            apply_seq = d.ledger.start_apply(d.env, current.id, release.version, supersede=opts.supersede)
        else:
            promotion = d.ledger.append_promotion(
                d.env,
                release.version,
                d.images,
                direction=plan.direction if plan else "UNKNOWN",
                expected_current=current.id if current else None,
                plan_digest=plan.digest if plan else None,
                supersede=opts.supersede,
                gates=gates,
                open_apply=True,
                targets=opts.targets,
                committed_at=release.provenance.committed_at,
            )
            apply_seq = d.ledger.last_apply_seq
            d.result.appended = True
    except PromotionConflict as exc:
        return d.refuse(exc.code, exc.message, 3, hint=exc.hint)
    except RolloutInFlight as exc:
        return d.refuse(exc.code, exc.message, 4, hint=exc.hint)
    d.result.promotion = promotion.model_dump(mode="json")
    d.result.target["promotion_id"] = promotion.id
    d.say(
        f"promoted {release.version} to {d.env} ({promotion.id})"
        if d.result.appended
        else f"{d.env} already runs {release.version}; applying and waiting"
    )
    return promotion, apply_seq


def shape_of(env_doc: dict[str, Any]) -> dict[str, Any]:
    """The minimal declared shape of an environment that does not render: kind, workloads, one sha256
    per workload object."""
    import hashlib

    def h(obj: Any) -> str:
        return "sha256:" + hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()

    workloads = [w for w in env_doc.get("workloads") or [] if isinstance(w, dict)]
    return {
        "kind": env_doc.get("kind"),
        "workloads": sorted(w["name"] for w in workloads),
        "secret_names": sorted({s for w in workloads for s in w.get("secrets") or []}),
        "objects": {f"workload/{w['name']}": h(w) for w in workloads},
    }


def _explain(d: Deployment) -> list[str]:
    release, plan, opts, env = d.release, d.plan, d.opts, d.env
    assert release is not None
    steps = []
    steps.append(
        f"release {release.version} would be "
        + ("cut from this checkout" if d.needs_cut else "used as recorded")
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
    hosted = _hosted(d)
    if hosted is not None:  # rule 4: converged by the control plane
        steps.append(f"the release would be uploaded to the control plane {hosted.client.endpoint}, which "
                     "converges the environment" + ("; this command would wait on its status" if opts.wait else ""))
    elif d.spec.runtime == "k8s" and d.spec.target is not None:
        runtime = f"the k8s runtime would apply the rendered objects to context {d.spec.target.context!r}"
        steps.append(f"{runtime} and wait for each rollout" if opts.wait else f"{runtime} without waiting")
    else:
        runtime = "the process runtime would start each workload"
        steps.append(f"{runtime} and wait for health" if opts.wait else f"{runtime} without waiting")
    if opts.targets:
        steps.append(f"only {', '.join(sorted(opts.targets))} would be rolled out (--target); every other "
                     "running workload would be left as it is")
    if not opts.yes and opts.approve is None:
        steps.append("without --yes or --approve, a terminal would ask for confirmation; without one, exit 5")
    return steps
