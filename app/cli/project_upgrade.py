"""`framework project upgrade`, `upgrade list`, `upgrade apply` (docs/reference-project.md#project-upgrade)."""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperGroup

from app.cli.database_views import examples, out, run, wants_json
from app.registry import PROJECT_UPGRADE

NOTE = ("Statuses: new, changed, merged, removed, conflict, skipped-disowned, skipped-scaffold-once (unchanged: "
        "with --all). A hand-edited generated file is merged three ways (git merge-file); a scaffold-once file "
        "only when named with --force (merged the same way); a disowned file never. Exit codes: 0 upgraded or "
        "checked; 1 a file or record that cannot be used, a tool failed; 2 bad usage (unknown or older --to); "
        "3 upgraded with conflicts (conflict markers left in the listed files; framework_version moved).")
_EVERY = "*"  # `--check` with no path: the summary of every file


class _UpgradeGroup(TyperGroup):
    """`--check [PATH]`: a path is optional (Typer has no optional-value option), so a bare `--check` is given
    the value `*` (every file) before Click parses; a following word that is a sub-command stays one."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        fixed: list[str] = []
        i = 0
        while i < len(args):
            arg = args[i]
            if arg == "--check":
                nxt = args[i + 1] if i + 1 < len(args) else None
                if nxt is None or nxt.startswith("-") or nxt in self.commands:
                    fixed.append(f"--check={_EVERY}")
                else:
                    fixed.append(f"--check={nxt}")
                    i += 1
            else:
                fixed.append(arg)
            i += 1
        return super().parse_args(ctx, fixed)


upgrade_app = typer.Typer(cls=_UpgradeGroup, help=PROJECT_UPGRADE.help, add_completion=False,
                          invoke_without_command=True,
                          pretty_exceptions_enable=False, subcommand_metavar="[list | apply]",
                          context_settings={"help_option_names": ["--help", "-h"]},
                          epilog=examples(*PROJECT_UPGRADE.examples, note=NOTE))


def _render(result: Any, path: str | None) -> None:
    if path is not None:
        for item in result.files:
            out(item.diff.rstrip("\n") if item.diff else f"{item.status}: {item.path} (no change)")
        if not result.files:
            out(f"{path}: no change")
        return
    for item in result.files:
        out(f"{item.status:22} {item.path}" + (f"  ({item.detail})" if item.detail else ""))
    verb = "would upgrade" if result.check else ("upgraded" if result.pinned else "regenerated")
    counts = ", ".join(f"{n} {status}" for status, n in sorted(result.summary.items())) or "nothing to change"
    out(f"{verb} {result.from_version} -> {result.to_version}: {counts}")
    if result.playbooks:
        out(f"pending playbooks: {', '.join(result.playbooks)} (framework project upgrade list)")


@upgrade_app.callback(invoke_without_command=True)
def upgrade(ctx: typer.Context,
            to: str | None = typer.Option(None, "--to", help="The target release (default: this framework's)."),
            check: str | None = typer.Option(None, "--check", metavar="[PATH]",
                                             help="Write nothing: each file's status; with a path, its diff."),
            dry_run: bool = typer.Option(False, "--dry-run", help="Same as --check."),
            all_files: bool = typer.Option(False, "--all", help="List unchanged files too."),
            force: list[str] = typer.Option([], "--force", metavar="PATH",
                                            help="Also write this scaffold-once file (repeatable; merged)."),
            json_output: bool = typer.Option(False, "--json", help="Print one JSON document.")) -> None:
    if ctx.invoked_subcommand is not None:
        ctx.obj = {"json": json_output}
        return
    path = check if check not in (None, _EVERY) else None

    def action() -> tuple[Any, int]:
        from engine.project import find_project
        from engine.upgrade.upgrade import CONFLICT_EXIT
        from engine.upgrade.upgrade import upgrade as run_upgrade

        result = run_upgrade(find_project(), to=to, check=check is not None or dry_run,
                             paths=[path] if path else None, force=force, all_files=all_files)
        return result, (CONFLICT_EXIT if result.conflicts and not result.check else 0)

    def conflicted(result: Any) -> dict[str, Any]:
        return {"code": "upgrade_conflict",
                "message": f"upgraded to {result.to_version} with conflicts in {', '.join(result.conflicts)}",
                "hint": "resolve the conflict markers (<<<<<<< ... >>>>>>>) before the next framework generate"}

    from app.output import run_command

    raise typer.Exit(run_command(wants_json(ctx, json_output), action, lambda r: _render(r, path),
                                 partial_error=conflicted))


@upgrade_app.command("list", help=PROJECT_UPGRADE.commands["list"], epilog=examples(
    "framework project upgrade list", "framework project upgrade list --to 0.1.0 --json",
    note="Pending: a playbook of a release after the project's starting point (its first recorded upgrade's "
         "from, else its pin) up to --to (default this framework), not yet applied. Exit codes: 0 listed; "
         "1 .framework/migrations.json unreadable; 2 bad usage."))
def upgrade_list(ctx: typer.Context,
                 to: str | None = typer.Option(None, "--to", help="The target release (default: this framework's)."),
                 json_output: bool = typer.Option(False, "--json", help="Print one JSON document.")) -> None:
    def action() -> tuple[Any, int]:
        from engine.project import find_project
        from engine.upgrade.playbooks import list_pending

        return list_pending(find_project(), to), 0

    def human(result: Any) -> None:
        for book in result.pending:
            out(f"{book.id}  ({book.version}) {book.title}")
            for step in book.steps:
                out(f"    - {step}")
        if not result.pending:
            out(f"no pending playbooks ({result.from_version} -> {result.to_version})")

    run(ctx, wants_json(ctx, json_output), action, human)


@upgrade_app.command("apply", help=PROJECT_UPGRADE.commands["apply"], epilog=examples(
    "framework project upgrade apply 0.1.0-ci-vet",
    note="Records the playbook in .framework/migrations.json (the steps are yours to do). Exit codes: 0 recorded "
         "or already recorded (said so); 1 unknown playbook id."))
def upgrade_apply(ctx: typer.Context, playbook: str = typer.Argument(..., help="The playbook id (upgrade list)."),
                  json_output: bool = typer.Option(False, "--json", help="Print one JSON document.")) -> None:
    def action() -> tuple[Any, int]:
        from engine.project import find_project
        from engine.upgrade.playbooks import apply

        return apply(find_project(), playbook), 0

    def human(result: Any) -> None:
        out(f"{result.id}: already applied ({result.at})" if result.already else f"applied {result.id}: {result.title}")

    run(ctx, wants_json(ctx, json_output), action, human)
