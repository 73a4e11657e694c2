"""`framework cluster up|down|reset|info|status|urls|logs|reload|instances` (docs/reference-cluster.md#commands)."""

from __future__ import annotations

from typing import Any

import typer

from app.cli import group_app
from app.cli.options import JSON_OPTION
from app.registry import FRAMEWORK

app = group_app("framework", "cluster")
HELP = FRAMEWORK.groups["cluster"].commands
ENV = typer.Argument(None, help="Environment whose K8sCluster (context k3d-<name>) declares the cluster.")
CONFIG = typer.Option(None, "--config", help="A k3d config file (default: deploy/k3d.yaml).")
PROVIDER = typer.Option(None, "--provider", help="k3d or kwok (default: the declaration's, else auto).")
NOTE = ("\n\n  Provider choice: --provider, else the declaration (K8sCluster.local_cluster), else the recorded "
        "cluster's, else k3d where Docker answers, else kwok (simulated nodes: pods do not run containers).")


def _project() -> Any:
    from app.cli.env_group import current_project

    return current_project()


def _provider(value: str | None) -> str | None:
    if value is not None and value not in ("k3d", "kwok"):
        from engine.errors import InvalidInput

        raise InvalidInput(f"--provider {value[:40]!r}: choose k3d or kwok")
    return value


def _run(json_output: bool, action: Any, human: Any) -> None:
    from app.output import run_command

    raise typer.Exit(run_command(json_output, action, human))


def _examples(*lines: str) -> str:
    return "Examples:\n\n  " + "\n\n  ".join(lines) + NOTE


@app.command("up", help=HELP["up"], epilog=_examples("framework cluster up", "framework cluster up cluster --wait",
                                                     "framework cluster up --config deploy/k3d.yaml --provider k3d"))
def up(env: str | None = ENV, config: str | None = CONFIG, provider: str | None = PROVIDER,
       wait: bool = typer.Option(False, "--wait", help="Wait until every node is ready."),
       json_output: bool = JSON_OPTION) -> None:
    from app.cli.cluster_views import render_cluster

    def action() -> tuple[Any, int]:
        from engine.cluster.lifecycle import up as cluster_up

        return cluster_up(_project(), env, config, wait=wait, provider_flag=_provider(provider)), 0

    _run(json_output, action, render_cluster)


@app.command("down", help=HELP["down"], epilog=_examples("framework cluster down", "framework cluster down cluster"))
def down(env: str | None = ENV, config: str | None = CONFIG, provider: str | None = PROVIDER,
         json_output: bool = JSON_OPTION) -> None:
    from app.cli.cluster_views import render_cluster

    def action() -> tuple[Any, int]:
        from engine.cluster.lifecycle import down as cluster_down

        return cluster_down(_project(), env, config, provider_flag=_provider(provider)), 0

    _run(json_output, action, render_cluster)


@app.command("reset", help=HELP["reset"], epilog=_examples("framework cluster reset", "framework cluster reset --wait"))
def reset(env: str | None = ENV, config: str | None = CONFIG, provider: str | None = PROVIDER,
          wait: bool = typer.Option(False, "--wait", help="Wait until every node is ready."),
          json_output: bool = JSON_OPTION) -> None:
    from app.cli.cluster_views import render_cluster

    def action() -> tuple[Any, int]:
        from engine.cluster.lifecycle import reset as cluster_reset

        return cluster_reset(_project(), env, config, wait=wait, provider_flag=_provider(provider)), 0

    _run(json_output, action, render_cluster)


@app.command("info", help=HELP["info"],
             epilog=_examples("framework cluster info", "framework cluster info cluster --json"))
def info(env: str | None = ENV, config: str | None = CONFIG, json_output: bool = JSON_OPTION) -> None:
    from app.cli.cluster_views import render_cluster

    def action() -> tuple[Any, int]:
        from engine.cluster.lifecycle import info as cluster_info

        return cluster_info(_project(), env, config), 0

    _run(json_output, action, render_cluster)


@app.command("status", help=HELP["status"],
             epilog=_examples("framework cluster status", "framework cluster status cluster --json")
             + "\n\n  Exit 0 when the cluster is up and every node is ready, 1 otherwise (absent, stopped, degraded).")
def status(env: str | None = ENV, config: str | None = CONFIG, json_output: bool = JSON_OPTION) -> None:
    from app.cli.cluster_views import run_status

    raise typer.Exit(run_status(json_output, env, config))


@app.command("urls", help=HELP["urls"], epilog=_examples("framework cluster urls", "framework cluster urls --json"))
def urls(env: str | None = ENV, config: str | None = CONFIG, json_output: bool = JSON_OPTION) -> None:
    from app.cli.cluster_views import render_urls

    def action() -> tuple[Any, int]:
        from engine.cluster.lifecycle import resolve
        from engine.cluster.ops import urls as cluster_urls

        project = _project()
        return cluster_urls(project, resolve(project, env, config)), 0

    _run(json_output, action, render_urls)


@app.command("instances", help=HELP["instances"],
             epilog=_examples("framework cluster instances", "framework cluster instances --json"))
def instances(env: str | None = ENV, config: str | None = CONFIG, json_output: bool = JSON_OPTION) -> None:
    from app.cli.cluster_views import render_instances

    def action() -> tuple[Any, int]:
        from engine.cluster.lifecycle import resolve
        from engine.cluster.ops import instances as cluster_instances

        project = _project()
        return cluster_instances(project, resolve(project, env, config)), 0

    _run(json_output, action, render_instances)


@app.command("logs", help=HELP["logs"], epilog=_examples(
    "framework cluster logs --service api --tail 20 --no-follow", "framework cluster logs cluster --json"))
def logs(env: str | None = ENV, config: str | None = CONFIG,
         service: str | None = typer.Option(None, "--service", help="Only this workload's pods."),
         tail: int = typer.Option(50, "--tail", help="Lines per pod from the end (then follow).", min=0),
         no_follow: bool = typer.Option(False, "--no-follow", help="Print the last lines and exit."),
         json_output: bool = JSON_OPTION) -> None:
    from app.cli.cluster_views import print_line

    follow = not no_follow and not json_output  # --json is one document: the lines so far

    def action() -> tuple[Any, int]:
        from engine.cluster.lifecycle import resolve
        from engine.cluster.ops import logs as cluster_logs

        project = _project()
        lines = cluster_logs(project, resolve(project, env, config), service=service, tail=tail, follow=follow,
                             on_line=None if json_output else print_line)
        return {"lines": [ln.model_dump() for ln in lines]}, 0

    _run(json_output, action, lambda _r: None)


@app.command("reload", help=HELP["reload"], epilog=_examples(
    "framework cluster reload cluster", "framework cluster reload cluster --image-tag dev-2 --dry-run"))
def reload(env: str = typer.Argument(..., help="Environment deploying to the cluster (its K8sCluster context)."),
           image_tag: str | None = typer.Option(None, "--image-tag", help="Tag of the workloads' images."),
           dry_run: bool = typer.Option(False, "--dry-run", help="Render and list the objects; apply nothing."),
           timeout: float = typer.Option(300.0, "--timeout", help="Rollout wait budget in seconds (exit 8)."),
           json_output: bool = JSON_OPTION) -> None:
    from app.cli.cluster_views import render_reload

    def action() -> tuple[Any, int]:
        from engine.cluster.config import load_config
        from engine.cluster.ops import reload as cluster_reload

        project = _project()
        return cluster_reload(project, load_config(project, env), env, image_tag=image_tag, dry_run=dry_run,
                              timeout=timeout)

    _run(json_output, action, render_reload)


TOKEN = typer.Option(None, "--token", help="Control-plane credential for this call (first in the precedence order).")
CP_ENV = typer.Option(..., "--env", help="Environment whose control plane records the cluster.")


@app.command("connect", help=HELP["connect"], epilog=_examples(
    "framework cluster connect staging --context gke_acme_europe-west1_staging --env cloud",
    "framework cluster connect lab --context lab-admin --env cloud --auth token --json"))
def connect(name: str = typer.Argument(..., help="Name the control plane records the cluster under."),
            context: str | None = typer.Option(None, "--context", help="kubeconfig context (default: name)."),
            env: str = CP_ENV,
            auth: str = typer.Option("auto", "--auth", help="auto (gcp for a GKE context, else token), gcp or token."),
            token: str | None = TOKEN, json_output: bool = JSON_OPTION) -> None:
    from app.cli.cluster_views import render_connected

    def action() -> tuple[Any, int]:
        from engine.cluster.connect import connect as cluster_connect

        return cluster_connect(_project(), name, context=context, env=env, auth=auth, token=token), 0

    _run(json_output, action, render_connected)


@app.command("disconnect", help=HELP["disconnect"], epilog=_examples(
    "framework cluster disconnect lab --env cloud", "framework cluster disconnect lab --env cloud --context lab-admin"))
def disconnect(name: str = typer.Argument(..., help="The connected cluster's name."), env: str = CP_ENV,
               context: str | None = typer.Option(None, "--context", help="kubeconfig context (default: recorded)."),
               token: str | None = TOKEN, json_output: bool = JSON_OPTION) -> None:
    from app.cli.cluster_views import render_disconnected

    def action() -> tuple[Any, int]:
        from engine.cluster.connect import disconnect as cluster_disconnect

        return cluster_disconnect(_project(), name, env=env, context=context, token=token), 0

    _run(json_output, action, render_disconnected)
