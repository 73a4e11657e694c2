"""`framework db seed apply|reset|status` (and the rest of the db group registered by `register`)."""

from __future__ import annotations

from typing import Any

import typer

from app.cli.database_views import DSN_OPTION, JSON_OPTION, examples, out, run, sub_app
from app.registry import DB_SEED, FRAMEWORK

DB_COMMANDS = FRAMEWORK.groups["db"].commands

ENV_OPTION = typer.Option(None, "--env", help="The development environment (default: dev).")
DEFINE_OPTION = typer.Option([], "-D", "--define", metavar="NAME=VALUE",
                             help="A render option of the environment (e.g. -D database=true). Repeatable.")
NOW_OPTION = typer.Option(None, "--now", help="Anchor of relative timestamps, ISO date or time "
                                              "(default: today 00:00 UTC).")
SEED_NOTE = ("Dev only. Refused on pending or dirty migrations. Exit codes: 0 done; 1 refused or failed "
             "(nothing written); 2 bad input.")


def _anchor(now: str | None) -> Any:
    if not now:
        return None
    from datetime import UTC, datetime

    from engine.errors import UsageError

    try:
        moment = datetime.fromisoformat(now)
    except ValueError:
        raise UsageError(f"--now {now!r} is not an ISO date or time", hint="e.g. --now 2025-01-01") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _render_seed(result: Any) -> None:
    for table, n in result.deleted.items():
        out(f"deleted {n} seeded rows from {table}")
    for table, n in result.inserted.items():
        out(f"seeded {n} rows into {table}")
    for name in result.custom_applied:
        out(f"applied custom seed {name}")
    if not result.inserted and not result.custom_applied:
        out("already seeded: nothing to insert")


def _render_status(result: Any) -> None:
    for t in result.tables:
        out(f"{t.table}: {t.seeded} seeded of {t.rows} rows")
    for name in result.custom_applied:
        out(f"custom seed applied: {name}")


def _options(pairs: list[str]) -> dict[str, str]:
    from engine.environments.options import parse_assignments

    return parse_assignments(pairs)


def _seed_action(kind: str, dsn: str | None, env: str | None, allow_remote: bool, now: str | None,
                 defines: list[str], json_output: bool) -> Any:
    def action() -> tuple[Any, int]:
        from app.output import diagnose
        from engine.database import guard
        from engine.database.seeds import apply as seeds
        from engine.project import find_project

        project = find_project()
        target = guard.seed_target(project, dsn, env, allow_remote, _options(defines))
        guard.migrations_clean(target, project)
        if kind == "apply":
            from app.progress import sink

            with sink(json_output) as shown:  # a bar per table on a terminal; silent in --json and pipes
                result = seeds.apply(target, project.root, project.config, _anchor(now), shown.step)
        else:
            result = seeds.reset(target, project.root, project.config, _anchor(now))
        for warning in result.warnings:  # diagnostics on stderr, also with --json
            diagnose(warning, label="warning")
        return result, 0

    return action


def _seed_command(kind: str) -> Any:
    def command(ctx: typer.Context, dsn: str | None = DSN_OPTION, env: str | None = ENV_OPTION,
                allow_remote_dsn: bool = typer.Option(False, "--allow-remote-dsn",
                                                      help="Accept a non-loopback DSN not the environment's own."),
                now: str | None = NOW_OPTION, defines: list[str] = DEFINE_OPTION,
                json_output: bool = JSON_OPTION) -> None:
        run(ctx, json_output, _seed_action(kind, dsn, env, allow_remote_dsn, now, defines, json_output), _render_seed)

    return command


def register(app: Any) -> None:
    seed = sub_app(DB_SEED)
    app.add_typer(seed, name="seed")

    for kind, example in (("apply", "framework db seed apply --dsn postgresql://app@127.0.0.1/app --json"),
                          ("reset", "framework db seed reset --env dev --json")):
        seed.command(kind, help=DB_SEED.commands[kind], epilog=examples(f"framework db seed {kind}", example,
                                                                        note=SEED_NOTE))(_seed_command(kind))

    @seed.command("status", help=DB_SEED.commands["status"], epilog=examples(
        "framework db seed status", "framework db seed status --json"))
    def seed_status(ctx: typer.Context, dsn: str | None = DSN_OPTION, env: str | None = ENV_OPTION,
                    defines: list[str] = DEFINE_OPTION, json_output: bool = JSON_OPTION) -> None:
        def action() -> tuple[Any, int]:
            from engine.database import guard
            from engine.database.seeds import apply as seeds
            from engine.project import find_project

            return seeds.status(guard.seed_target(find_project(), dsn, env, True, _options(defines))), 0

        run(ctx, json_output, action, _render_status)

    @app.command("reset", help=DB_COMMANDS["reset"], epilog=examples(
                     "framework db reset", "framework db reset --env dev -D database=true --yes --json",
                     note="Dev only; the DSN must equal the environment's declared one (arbitrary loopback DSNs "
                          "are refused). Exit codes: 0 done; 1 refused or failed; 2 bad input."))
    def reset(ctx: typer.Context, dsn: str | None = DSN_OPTION, env: str | None = ENV_OPTION,
              yes: bool = typer.Option(False, "--yes", "-y", help="Skip the confirmation."),
              now: str | None = NOW_OPTION, defines: list[str] = DEFINE_OPTION,
              json_output: bool = JSON_OPTION) -> None:
        def action() -> tuple[Any, int]:
            from app.output import progress
            from engine.database import guard
            from engine.database import reset as resetting
            from engine.project import find_project

            project = find_project()
            target = guard.reset_target(project, dsn, env, _options(defines))
            _confirm(resetting.confirmation_text(target), yes)
            return resetting.reset(project, target, _anchor(now), on_step=progress), 0

        run(ctx, json_output, action, _render_reset)

    @app.command("introspect", help=DB_COMMANDS["introspect"], epilog=examples("framework db introspect --dsn postgresql://app@127.0.0.1/app",
                                 "framework db introspect --format json"))
    def introspect(ctx: typer.Context, dsn: str | None = DSN_OPTION,
                   fmt: str = typer.Option("text", "--format", help="text or json."),
                   json_output: bool = JSON_OPTION) -> None:
        def action() -> tuple[Any, int]:
            from engine.database import dsn as dsns
            from engine.database.introspect import introspect as read
            from engine.errors import UsageError

            if fmt not in ("text", "json"):
                raise UsageError(f"--format {fmt!r}: use text or json")
            target = dsns.resolve(dsn)
            assert target is not None
            return read(target), 0

        run(ctx, json_output or fmt == "json", action, _render_schema)

    @app.command("squash", help=DB_COMMANDS["squash"], epilog=examples(
        "framework db squash --from-dir db/migrations db/baseline",
        "framework db squash --from-dir db/migrations /tmp/baseline --json",
        note="Runs a throwaway PostgreSQL from the local server binaries (no container runtime), dumps it with "
             "pg_dump, and writes the baseline only when introspecting it equals the sources."))
    def squash(ctx: typer.Context, out_dir: str = typer.Argument(..., help="Where the baseline is written."),
               from_dir: str = typer.Option(..., "--from-dir", help="The migrations to collapse."),
               json_output: bool = JSON_OPTION) -> None:
        def action() -> tuple[Any, int]:
            from pathlib import Path

            from app.output import progress
            from engine.database.squash import squash as collapse

            progress(f"applying {from_dir} in a throwaway PostgreSQL")
            return collapse(Path(from_dir), Path(out_dir)), 0

        run(ctx, json_output, action, lambda r: out(f"wrote {r.file} ({r.sources} migrations, {r.tables} tables, "
                                                    "verified equal)"))


def _confirm(expected: str, yes: bool) -> None:
    """Typed confirmation of host and database name; without a terminal, --yes is required."""
    import sys

    from engine.database.errors import Refused

    if yes:
        return
    if not sys.stdin.isatty():
        raise Refused(f"db reset needs confirmation: type {expected} on a terminal, or pass --yes")
    sys.stderr.write(f"This drops and recreates {expected}. Type {expected} to confirm: ")
    sys.stderr.flush()
    if sys.stdin.readline().strip() != expected:
        raise Refused("confirmation did not match: nothing was changed")


def _render_reset(result: Any) -> None:
    out(f"reset {result.database}: {result.migrated} migrations applied (version {result.version}), "
        f"{sum(result.seeded.values())} rows seeded")


def _render_schema(schema: Any) -> None:
    for t in schema.tables:
        out(f"table {t.qualified}" + (f"  -- {t.comment}" if t.comment else ""))
        for c in t.columns:
            extra = "" if c.nullable else " NOT NULL"
            extra += f" DEFAULT {c.default}" if c.default else ""
            extra += f" GENERATED {c.identity.upper()} AS IDENTITY" if c.identity else ""
            extra += f"  -- {c.comment}" if c.comment else ""
            out(f"  {c.name} {c.type}{extra}")
        for k in t.constraints:
            out(f"  constraint {k.name} {k.kind}: {k.definition}")
        for i in t.indexes:
            out(f"  index {i.name}: {i.definition}")
