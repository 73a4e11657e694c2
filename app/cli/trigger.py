"""`platform trigger ...` (docs/reference-webhooks.md#commands: trigger definitions, activation, states)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import typer

from app.cli import group_app
from app.cli.automation import BEFORE_OPTION, LIMIT_OPTION, run_history
from app.cli.options import JSON_OPTION
from app.registry import PLATFORM

app = group_app("platform", "trigger")
HELP = PLATFORM.groups["trigger"].commands
NOTE = "\n\n  The server is PLATFORM_SERVER_URL; the API token is PLATFORM_TOKEN."
AUTOMATION = typer.Argument(..., help="Automation name.")
TRIGGER = typer.Argument(..., help="Trigger name.")
SECRET_ENV = typer.Option(
    None,
    "--hmac-secret-env",
    metavar="VAR",
    help="Read the HMAC shared secret from this environment variable.",
)
SECRET_STDIN = typer.Option(False, "--hmac-secret-stdin", help="Read the HMAC shared secret from stdin.")


def _secret(env: str | None, stdin: bool) -> str | None:
    from engine.errors import EngineError

    if env and stdin:
        raise EngineError(
            "give --hmac-secret-env or --hmac-secret-stdin, not both", code="usage", exit_code=2
        )
    if env:
        value = os.environ.get(env)
        if not value:
            raise EngineError(f"environment variable {env} is empty or unset", code="usage", exit_code=2)
        return value
    if stdin:
        value = sys.stdin.readline().rstrip("\r\n")
        if not value:
            raise EngineError("no HMAC secret on stdin", code="usage", exit_code=2)
        return value
    return None


def _render_activation(result: Any) -> None:
    print(
        f"trigger {result.trigger.automation}/{result.trigger.name} is active; the token is shown only now."
    )
    print(f"URL (Authorization: Bearer <token>{', or signed' if result.hmac else ''}): {result.url}")
    print(f"token: {result.token}")
    print(f"URL with token (the whole URL is secret): {result.url_with_token}")


def _render_trigger(t: Any) -> None:
    state = ("enabled" if t.enabled else "disabled") + ("" if t.activated else " (not activated)")
    print(f"{t.automation}/{t.name}  {state}  {t.url or '-'}")


@app.command(
    "add",
    help=HELP["add"],
    epilog="Examples:\n\n  platform trigger add triage github --hmac-header X-Hub-Signature-256 "
    "--hmac-prefix sha256=\n\n  platform trigger add triage shop --hmac-header X-Shopify-Hmac-Sha256 "
    "--hmac-encoding base64\n\n  platform trigger add triage opened "
    "--filter 'has(trigger.payload.body.action) && trigger.payload.body.action == \"opened\"'"
    "\n\n  platform trigger add triage ci --file trigger.yaml" + NOTE,
)
def add(
    automation: str = AUTOMATION,
    name: str | None = typer.Argument(None, help="Trigger name (or `name` in --file)."),
    file: Path | None = typer.Option(
        None, "--file", help="Trigger definition (YAML: name, webhook, filter)."
    ),
    filter_: str | None = typer.Option(None, "--filter", help="CEL expression over trigger.payload."),
    hmac: bool = typer.Option(False, "--hmac", help="Verify HMAC signatures (defaults below)."),
    header: str | None = typer.Option(None, "--hmac-header", help="Signature header (X-Signature-256)."),
    algorithm: str | None = typer.Option(None, "--hmac-algorithm", help="sha256 (default), sha1, sha512."),
    prefix: str | None = typer.Option(None, "--hmac-prefix", help="Text before the digest, e.g. sha256=."),
    encoding: str | None = typer.Option(None, "--hmac-encoding", help="hex (default) or base64."),
    json_output: bool = JSON_OPTION,
) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.hooks.client import add_trigger
        from engine.hooks.definition import definition_from

        hmac_fields = {"header": header, "algorithm": algorithm, "prefix": prefix, "encoding": encoding}
        return add_trigger(automation, definition_from(file, name, filter_, hmac, hmac_fields)), 0

    raise typer.Exit(run_command(json_output, action, _render_trigger))


@app.command(
    "activate",
    help=HELP["activate"],
    epilog='Examples:\n\n  platform trigger activate triage ci\n\n  printf %s "$SECRET" | '
    "platform trigger activate triage github --hmac-secret-stdin --json" + NOTE,
)
def activate(
    automation: str = AUTOMATION,
    trigger: str = TRIGGER,
    secret_env: str | None = SECRET_ENV,
    secret_stdin: bool = SECRET_STDIN,
    json_output: bool = JSON_OPTION,
) -> None:
    raise typer.Exit(_activation(automation, trigger, secret_env, secret_stdin, json_output, rotate=False))


@app.command(
    "rotate",
    help=HELP["rotate"],
    epilog="Examples:\n\n  platform trigger rotate triage ci\n\n  platform trigger rotate triage github "
    "--hmac-secret-env NEW_SECRET" + NOTE,
)
def rotate(
    automation: str = AUTOMATION,
    trigger: str = TRIGGER,
    secret_env: str | None = SECRET_ENV,
    secret_stdin: bool = SECRET_STDIN,
    json_output: bool = JSON_OPTION,
) -> None:
    raise typer.Exit(_activation(automation, trigger, secret_env, secret_stdin, json_output, rotate=True))


def _activation(automation: str, trigger: str, secret_env: str | None, secret_stdin: bool, json_output: bool,
                *, rotate: bool) -> int:
    """activate and rotate: one call; the token (and URL) are shown once."""
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.hooks.client import activate as call

        return call(automation, trigger, _secret(secret_env, secret_stdin), rotate=rotate), 0

    return run_command(json_output, action, _render_activation)


def _toggle(automation: str, trigger: str, enabled: bool, json_output: bool) -> int:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.hooks.client import set_enabled

        return set_enabled(automation, trigger, enabled), 0

    return run_command(json_output, action, _render_trigger)


@app.command("enable", help=HELP["enable"], epilog="Examples:\n\n  platform trigger enable triage ci" + NOTE)
def enable(automation: str = AUTOMATION, trigger: str = TRIGGER, json_output: bool = JSON_OPTION) -> None:
    raise typer.Exit(_toggle(automation, trigger, True, json_output))


@app.command(
    "disable", help=HELP["disable"], epilog="Examples:\n\n  platform trigger disable triage ci" + NOTE
)
def disable(automation: str = AUTOMATION, trigger: str = TRIGGER, json_output: bool = JSON_OPTION) -> None:
    raise typer.Exit(_toggle(automation, trigger, False, json_output))


@app.command(
    "history",
    help=HELP["history"],
    epilog="Examples:\n\n  platform trigger history triage ci\n\n  platform trigger history triage ci "
    "--limit 10 --json" + NOTE,
)
def history(
    automation: str = AUTOMATION,
    trigger: str = TRIGGER,
    limit: int = LIMIT_OPTION,
    before: str | None = BEFORE_OPTION,
    json_output: bool = JSON_OPTION,
) -> None:
    raise typer.Exit(run_history(automation, trigger, limit, before, json_output))


@app.command(
    "replay",
    help=HELP["replay"],
    epilog="Examples:\n\n  platform trigger replay triage dlv_0005f1c2a3b4c5d6e7f8a9\n\n"
    "  platform trigger replay triage dlv_0005f1c2a3b4c5d6e7f8a9 --json" + NOTE,
)
def replay(
    automation: str = AUTOMATION,
    delivery: str = typer.Argument(..., help="Delivery id (from `platform trigger history`)."),
    json_output: bool = JSON_OPTION,
) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.hooks.client import replay as call

        return call(automation, delivery), 0

    def render(d: Any) -> None:
        print(f"replayed {delivery} as delivery {d.id} ({d.outcome}); its run shows in "
              f"`platform trigger history {automation} {d.trigger}`")

    raise typer.Exit(run_command(json_output, action, render))


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:g} ms"


def _render_stats(st: Any) -> None:
    print(f"{st.automation}/{st.trigger}, {st.since} to {st.until}: {st.deliveries} deliveries, "
          f"{st.rejected} rejected, {st.deduplicated} deduplicated; answer latency p50 {_ms(st.p50_ms)}, "
          f"p99 {_ms(st.p99_ms)}")
    busy = [m for m in st.per_minute if m.deliveries]
    if busy:
        print(f"{'MINUTE':<25} {'DELIVERIES':>10} {'REJECTED':>9} {'DEDUPED':>8} {'P50':>12} {'P99':>12}")
    for m in busy:
        print(f"{m.start:<25} {m.deliveries:>10} {m.rejected:>9} {m.deduplicated:>8} {_ms(m.p50_ms):>12} "
              f"{_ms(m.p99_ms):>12}")


@app.command(
    "stats",
    help=HELP["stats"],
    epilog="Examples:\n\n  platform trigger stats triage ci\n\n  platform trigger stats triage ci --minutes 15 --json"
    + NOTE,
)
def stats(
    automation: str = AUTOMATION,
    trigger: str = TRIGGER,
    minutes: int = typer.Option(60, "--minutes", help="The window: this many minutes up to now (1-1440)."),
    json_output: bool = JSON_OPTION,
) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.errors import EngineError
        from engine.hooks.client import stats as call

        if not 1 <= minutes <= 1440:
            raise EngineError(f"--minutes must be 1-1440, not {minutes}", code="usage", exit_code=2)
        return call(automation, trigger, minutes), 0

    raise typer.Exit(run_command(json_output, action, _render_stats))
