"""`framework scaffold [noun]` (docs/reference-authoring.md#commands). Every scaffold has --dry-run (lists the files it
would write, writes none)."""

from __future__ import annotations

from typing import Any

import typer

from app.cli.database_views import examples, out
from app.cli.options import JSON_OPTION
from app.registry import FRAMEWORK

GROUP = FRAMEWORK.groups["scaffold"]
HELP = GROUP.commands
DRY_RUN = typer.Option(False, "--dry-run", help="List the files it would write; write none.")
app = typer.Typer(help=GROUP.help, add_completion=False, invoke_without_command=True, pretty_exceptions_enable=False,
                  context_settings={"help_option_names": ["--help", "-h"]},
                  epilog=examples(*GROUP.examples, note="With no noun: phase 1 births every framework:entity message "
                                  "whose table no migration creates (CRUD quintet injected once, an owned "
                                  "create-table migration); phase 2 generates. A no-op when nothing is missing."))


def _render(result: Any) -> None:
    for item in result.files:
        out(f"{item['change']:8} {item['path']}")
    if result.snippet and result.what == "scaffold rpc":
        out("\nadd to the service's proto, then run framework generate:\n")
        out(result.snippet.rstrip())
    elif result.snippet:
        out("\n" + result.snippet.rstrip())
    if not result.files:
        out("nothing to scaffold")
    elif result.dry_run:
        out(f"dry run: {len(result.files)} files would change; none written")


def _run(json_output: bool, call: Any) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.project import find_project

        return call(find_project()), 0

    raise typer.Exit(run_command(json_output, action, _render))


@app.callback(invoke_without_command=True)
def scaffold(ctx: typer.Context,
             service: str | None = typer.Option(None, "--service", help="Only entities of this service."),
             dry_run: bool = DRY_RUN, json_output: bool = JSON_OPTION) -> None:
    if ctx.invoked_subcommand is not None:
        return
    from engine.authoring.scaffold import scaffold_missing

    _run(json_output, lambda p: scaffold_missing(p, service=service, dry_run=dry_run))


@app.command("entity", help=HELP["entity"], epilog=examples(
    "framework scaffold entity order", "framework scaffold entity order --from-proto shop.Order --dry-run",
    note="Without --from-proto the project's only service gets a new message <Name> (id, name). "
         "Exit codes: 0 done; 1 invalid input or a tool failed; 2 bad usage."))
def entity(name: str = typer.Argument(..., help="The entity (snake_case or CamelCase)."),
           from_proto: str | None = typer.Option(None, "--from-proto", help="<svc>[.<Message>]: mark this message."),
           dry_run: bool = DRY_RUN, json_output: bool = JSON_OPTION) -> None:
    from engine.authoring.scaffold import scaffold_entity

    _run(json_output, lambda p: scaffold_entity(p, name, from_proto=from_proto, dry_run=dry_run))


@app.command("service", help=HELP["service"], epilog=examples(
    "framework scaffold service billing", "framework scaffold service billing audit --resume",
    note="Each service: proto/<name>/v1/<name>.proto and an entry under `services`; it is served by the "
         "project's process, which listens on config field `port` (env PORT, default 8080). --resume and --force "
         "together: exit 2 (they are mutually exclusive)."))
def service(names: list[str] = typer.Argument(..., help="Service names."),
            resume: bool = typer.Option(False, "--resume", help="Skip the services already written."),
            force: bool = typer.Option(False, "--force", help="Re-create services that exist."),
            dry_run: bool = DRY_RUN, json_output: bool = JSON_OPTION) -> None:
    from engine.authoring.scaffold import scaffold_services

    _run(json_output, lambda p: scaffold_services(p, names, resume=resume, force=force, dry_run=dry_run))


@app.command("rpc", help=HELP["rpc"], epilog=examples(
    "framework scaffold rpc shop Ping", "framework scaffold rpc shop Watch --stream server --dry-run",
    note="--stream server|client|bidi (omit for unary)."))
def rpc(svc: str = typer.Argument(..., help="The service (key, name or full name)."),
        name: str = typer.Argument(..., help="The RPC (CamelCase)."),
        stream: str | None = typer.Option(None, "--stream", help="server, client or bidi (omit for unary)."),
        dry_run: bool = DRY_RUN, json_output: bool = JSON_OPTION) -> None:
    from engine.authoring.scaffold import scaffold_rpc

    _run(json_output, lambda p: scaffold_rpc(p, svc, name, stream=stream, dry_run=dry_run))


@app.command("handler-file", help=HELP["handler-file"], epilog=examples(
    "framework scaffold handler-file shop pricing", "framework scaffold handler-file shop pricing --dry-run"))
def handler_file(svc: str = typer.Argument(..., help="The service."),
                 name: str = typer.Argument(..., help="The file's name (without .go)."),
                 dry_run: bool = DRY_RUN, json_output: bool = JSON_OPTION) -> None:
    from engine.authoring.scaffold import scaffold_handler_file

    _run(json_output, lambda p: scaffold_handler_file(p, svc, name, dry_run=dry_run))


@app.command("binary", help=HELP["binary"], epilog=examples(
    "framework scaffold binary migrator", "framework scaffold binary migrator --dry-run --json"))
def binary(name: str = typer.Argument(..., help="The binary's name."), dry_run: bool = DRY_RUN,
           json_output: bool = JSON_OPTION) -> None:
    from engine.authoring.scaffold import scaffold_binary

    _run(json_output, lambda p: scaffold_binary(p, name, dry_run=dry_run))


# ---- workers, webhooks, packages, adapters, libraries (docs/reference-authoring.md#workers-and-webhooks) ----

@app.command("worker", help=HELP["worker"], epilog=examples(
    "framework scaffold worker mailer", "framework scaffold worker mailer --no-generate --dry-run",
    note="internal/workers/<name>/worker.go is yours (Run(ctx) until shutdown); cmd/<name>/main.go is generated "
         "(health on env PORT, SIGTERM). Exit codes: 0 done; 1 invalid input or a tool failed; 2 bad usage."))
def worker(name: str = typer.Argument(..., help="The worker's name."),
           no_generate: bool = typer.Option(False, "--no-generate", help="Write the worker; skip generate."),
           dry_run: bool = DRY_RUN, json_output: bool = JSON_OPTION) -> None:
    from engine.authoring.scaffold_workloads import scaffold_worker

    _run(json_output, lambda p: scaffold_worker(p, name, no_generate=no_generate, dry_run=dry_run))


@app.command("webhook", help=HELP["webhook"], epilog=examples(
    "framework scaffold webhook github_push --service shop --sender github",
    "framework scaffold webhook orders --service shop --dry-run",
    note="Mounted at POST /webhooks/<service>/<name>; the secret is read from env WEBHOOK_<NAME>_SECRET. "
         "--sender: generic, github, github-legacy, shopify (the platform's presets). "
         "Exit codes: 0 done; 1 invalid input or a tool failed; 2 bad usage (--service missing)."))
def webhook(name: str = typer.Argument(..., help="The webhook's name."),
            service: str | None = typer.Option(None, "--service", help="The service it is an endpoint of "
                                                                         "(required)."),
            sender: str = typer.Option("generic", "--sender", help="The sender preset (signature format)."),
            dry_run: bool = DRY_RUN, json_output: bool = JSON_OPTION) -> None:
    from engine.authoring.scaffold_workloads import scaffold_webhook

    _run(json_output, lambda p: scaffold_webhook(p, name, service=service, sender=sender, dry_run=dry_run))


PACKAGE_EPILOG = examples(
    "framework scaffold package pricing", "framework scaffold package bus --kind eventbus",
    note="internal/<name>/contract.go and service.go are yours; generate writes the contract's mock "
         "internal/<name>/<name>mock. --kind eventbus: in-process and PostgreSQL (outbox) buses. "
         "Exit codes: 0 done; 1 invalid input or a tool failed; 2 bad usage.")
TYPE_OPTION = typer.Option(None, "--type", help="service (default) or adapter.")
KIND_OPTION = typer.Option(None, "--kind", help="eventbus: the project's event bus (an adapter).")


def package_command(name: str = typer.Argument(..., help="The package's name."), type_: str | None = TYPE_OPTION,
                    kind: str | None = KIND_OPTION, dry_run: bool = DRY_RUN, json_output: bool = JSON_OPTION) -> None:
    from engine.authoring.packages import scaffold_package

    _run(json_output, lambda p: scaffold_package(p, name, type_=type_, kind=kind, dry_run=dry_run))


app.command("package", help=HELP["package"], epilog=PACKAGE_EPILOG)(package_command)


@app.command("adapter", help=HELP["adapter"], epilog=examples(
    "framework scaffold adapter payments", "framework scaffold adapter bus --kind eventbus --dry-run",
    note="The same as scaffold package --type adapter. Exit codes: 0 done; 1 invalid input; 2 bad usage."))
def adapter(name: str = typer.Argument(..., help="The adapter's name."), kind: str | None = KIND_OPTION,
            dry_run: bool = DRY_RUN, json_output: bool = JSON_OPTION) -> None:
    from engine.authoring.packages import scaffold_package

    _run(json_output, lambda p: scaffold_package(p, name, type_="adapter", kind=kind, dry_run=dry_run,
                                                 by="scaffold adapter"))


@app.command("library", help=HELP["library"], epilog=examples(
    "framework scaffold library textutil", "framework scaffold library textutil --path pkg/textutil --no-exclude",
    note="<path>/<name>.go and its test, yours; <path> (default internal/<name>) is added to framework.yaml "
         "contracts.exclude unless --no-exclude. Exit codes: 0 done; 1 exists (without --force); 2 bad usage."))
def library(name: str = typer.Argument(..., help="The library's name."),
            path: str | None = typer.Option(None, "--path", help="Its directory (default internal/<name>)."),
            no_exclude: bool = typer.Option(False, "--no-exclude", help="Leave it out of contracts.exclude."),
            force: bool = typer.Option(False, "--force", help="Write over its files when they exist."),
            dry_run: bool = DRY_RUN, json_output: bool = JSON_OPTION) -> None:
    from engine.authoring.packages import scaffold_library

    _run(json_output, lambda p: scaffold_library(p, name, path=path, no_exclude=no_exclude, force=force,
                                                 dry_run=dry_run))


NO_GENERATE = typer.Option(False, "--no-generate", help="Write the scaffold's files only; run `framework generate` "
                           "later (controller-gen: deep-copy, CRD manifests, RBAC).")


@app.command("operator", help=HELP["operator"], epilog=examples(
    "framework scaffold operator widgets --with-placeholder-crd",
    "framework scaffold operator widgets --group widgets.example.com --version v1 --crd-type Widget --dry-run",
    note="Writes cmd/<name>/main.go, the API group-version under --api-package (default api/<name>/<version>), "
         "internal/<name>/controller/, entries under `operators` and `binaries` in framework.yaml and a dev "
         "workload; then generates (controller-gen). --crd-type implies --with-placeholder-crd. Exit codes: 0 done; "
         "1 invalid input or a tool failed; 2 bad usage."))
def operator(name: str = typer.Argument(..., help="The operator's name (snake_case)."),
             group: str | None = typer.Option(None, "--group", help="The API group (default <name>.<module host>)."),
             version: str = typer.Option("v1alpha1", "--version", help="The API version (v1, v1alpha1, ...)."),
             with_placeholder_crd: bool = typer.Option(False, "--with-placeholder-crd",
                                                       help="Also scaffold a first CRD kind (see --crd-type)."),
             api_package: str | None = typer.Option(None, "--api-package",
                                                    help="Directory of the API types (last segment: the version)."),
             crd_type: str | None = typer.Option(None, "--crd-type", help="The placeholder CRD's kind (CamelCase)."),
             no_generate: bool = NO_GENERATE, dry_run: bool = DRY_RUN, json_output: bool = JSON_OPTION) -> None:
    from engine.authoring.scaffold_operator import scaffold_operator

    _run(json_output, lambda p: scaffold_operator(
        p, name, group=group, version=version, api_package=api_package, with_placeholder_crd=with_placeholder_crd,
        crd_type=crd_type, no_generate=no_generate, dry_run=dry_run))


@app.command("crd", help=HELP["crd"], epilog=examples(
    "framework scaffold crd Gadget", "framework scaffold crd Gadget --operator widgets --dry-run",
    note="Writes <api-package>/<kind>_types.go and internal/<operator>/controller/<kind>_controller.go and "
         "_controller_test.go (yours), then generates. --operator is required when the project has several."))
def crd(name: str = typer.Argument(..., help="The kind (CamelCase, e.g. Gadget)."),
        operator_name: str | None = typer.Option(None, "--operator", help="The operator (when there are several)."),
        no_generate: bool = NO_GENERATE, dry_run: bool = DRY_RUN, json_output: bool = JSON_OPTION) -> None:
    from engine.authoring.scaffold_operator import scaffold_crd

    _run(json_output, lambda p: scaffold_crd(p, name, operator=operator_name, no_generate=no_generate,
                                             dry_run=dry_run))
