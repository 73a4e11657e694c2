"""Human output of `framework cluster ...` (the `--json` documents are the engine's models)."""

from __future__ import annotations

from typing import Any


def render_cluster(v: Any) -> None:
    what = ("created" if v.created else "already up: nothing done") if v.created is not None else (
        ("deleted" if v.deleted else "not found: nothing to delete") if v.deleted is not None else v.state)
    print(f"cluster {v.name}: {what}")
    print(f"  provider: {v.provider_description or 'chosen at `cluster up` (k3d where Docker answers, else kwok)'}")
    print(f"  context:  {v.context}")
    print(f"  declared: {v.source}; {v.servers} server(s), {v.agents} agent(s); ingress "
          + (f"on :{v.ingress.get('http_port')}" if v.ingress.get("enabled") else "disabled"))
    for c in v.components:
        print(f"  component {c['name']:<24} {c['state']}" + (f" (pid {c['pid']})" if c.get("pid") else ""))
    for n in v.nodes:
        print(f"  node      {n['name']:<24} {'Ready' if n['ready'] else 'NotReady'} {n.get('version') or ''}")
    if v.seconds is not None:
        print(f"  took {v.seconds:.1f}s")
    if v.state == "absent" and v.deleted is None:
        print("  create it: framework cluster up" + (f" {v.env}" if v.env else ""))


def render_urls(u: Any) -> None:
    if u.notice:
        print(u.notice)
    if not u.ingress_enabled:
        return
    if not u.urls:
        print(f"no Ingress on cluster {u.cluster} (deploy an environment with routes)")
    for r in u.urls:
        print(f"  {r.url:<56} {r.namespace}/{r.service}")


def render_instances(i: Any) -> None:
    print(f"managed namespaces on {i.cluster} ({i.context}):")
    for r in i.instances:
        print(f"  {r.namespace:<32} env {r.env or '-':<12} {r.workloads} workload(s)  {r.phase}")
    if not i.instances:
        print("  none (framework env deploy <env> to a K8sCluster on this cluster)")


def print_line(line: Any) -> None:
    print(f"[{line.pod}] {line.line}", flush=True)


def render_reload(r: Any) -> None:
    if r.dry_run:
        print(f"reload {r.env} on {r.cluster} (dry run: nothing applied), namespace {r.namespace}:")
        for o in r.objects:
            print(f"  {o}")
        return
    print(f"reload {r.env} on {r.cluster}: {r.phase} ({len(r.objects)} objects applied to {r.namespace})")
    for res in r.resources:
        print(f"  {res.get('kind') or ''} {res['name']}: {res['outcome']}"
              + (f" ({res['ready_replicas']} ready)" if res.get("ready_replicas") is not None else ""))


def render_connected(c: Any) -> None:
    print(f"cluster {c.name}: {'updated' if c.updated else 'connected'} on {c.endpoint} (env {c.env})")
    print(f"  context {c.context}; auth {c.auth}: service account {c.namespace}/{c.service_account}, "
          f"its token {c.credential} on the control plane (not in this checkout)")


def render_disconnected(d: Any) -> None:
    print(f"cluster {d.name}: credential revoked by {d.endpoint}, then deleted on {d.context}:")
    for obj in d.deleted:
        print(f"  {obj}")
    print("  and forgotten by the control plane")


def run_status(json_output: bool, env: str | None, config: str | None) -> int:
    """`cluster status`: exit 0 when running with every node ready, else 1 (the state as the error)."""
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.cluster.lifecycle import status
        from engine.project import find_project

        view = status(find_project(), env, config)
        return view, (0 if view.ready else 1)

    return run_command(json_output, action, render_cluster, partial_error=lambda v: {
        "code": "cluster_not_ready", "message": f"cluster {v.name} is {v.state}"})


def fast_status(argv: list[str]) -> int | None:
    """`cluster status [env] [--config f] [--json]` without Typer (docs/reference-cluster.md#speed); None
    hands anything else (help, usage errors) to Typer."""
    from app.cli.fast_args import parse

    parsed = parse(argv, {"--json": ("json_output", bool), "--config": ("config", str)},
                   {"json_output": False, "config": None})
    if parsed is None or len(parsed[0]) > 1:
        return None
    positional, params = parsed
    return run_status(params["json_output"], positional[0] if positional else None, params["config"])
