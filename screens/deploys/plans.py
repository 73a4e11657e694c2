"""Plans screen: pick an environment and a release, read the deploy plan, confirm it, watch it deploy.

Same engine calls as `framework env list`, `framework release list`, `framework env deploy <env>
<v> --plan` and `framework env deploy <env> <v> --approve <digest>` (docs/reference-deploy.md#env-deploy: the
approval is bound to the plan digest; a moved environment is a compare-and-set refusal, exit 3, shown here
with a one-key re-plan). Protected environments need their name typed (settings).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Static

from screens.base import DashboardScreen
from screens.deploys.support import (
    DeployFinished,
    DeployProgress,
    PlanComputed,
    command_line,
    compute_plan,
    deploy_argv,
    run_deploy,
)
from screens.widgets.background import read_worker
from screens.widgets.table_sync import sync_rows

ENV_COLUMNS = (("name", "Environment"), ("kind", "Kind"), ("target", "Target"), ("protected", "Protected"))
RELEASE_COLUMNS = (("version", "Release"), ("commit", "Commit"), ("workloads", "Workloads"))


@dataclass
class ChoicesLoaded(Message):
    environments: Any = None
    releases: Any = None
    error: Any = None


def plan_text(result: Any) -> str:
    """The plan as plain text: images with both digests, direction, commits, findings."""
    from screens.widgets.status_text import short_digest

    plan = result.deploy_plan
    if plan is None:
        return ("No plan could be computed: the running release is not known to this checkout "
                "(this is not \"no changes\").")
    lines = [f"{plan['env']}: {plan['current_release'] or '(nothing)'} -> {plan['release']}   "
             f"direction {plan['direction']}",
             f"plan digest {plan['digest']}",
             f"current promotion {plan['current_promotion_id'] or 'none (unbound)'}", "",
             f"{'image':<14}{'change':<11}{'from':<14}{'to':<14}"]
    for img in plan["images"]:
        lines.append(f"{img['name']:<14}{img['change']:<11}{short_digest(img['from_digest']):<14}"
                     f"{short_digest(img['to_digest']):<14}")
    lines.append("")
    lines.append(f"commits between the releases: {len(plan['commits'])}")
    lines += [f"  {c['commit'][:10]} {c['subject']}" for c in plan["commits"][:20]]
    if plan["findings"]:
        lines.append("findings:")
        lines += [f"  {f['severity'].upper()} {f['code']}: {f['message']}" for f in plan["findings"]]
    else:
        lines.append("findings: none (nothing destructive)")
    return "\n".join(lines)


class PlansScreen(DashboardScreen):
    NAME = "plans"
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("p", "plan", "Plan / re-plan", id="plans.plan"),
        Binding("d", "deploy", "Deploy", id="plans.deploy"),
        Binding("r", "reload", "Reload", id="plans.reload"),
        Binding("j", "cursor_down", "Down", id="plans.down", show=False),
        Binding("k", "cursor_up", "Up", id="plans.up", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.loads = 0
        self.environments: list[Any] = []
        self.releases: list[Any] = []
        self.plan_result: Any = None
        self.plan_for: tuple[str, str] | None = None
        self.deploying = False
        self.last_deploy: Any = None
        self.refusal: dict[str, Any] | None = None
        self.progress: list[str] = []

    def compose_body(self) -> ComposeResult:
        yield Static("loading environments and releases ...", id="plans-status", classes="status-line")
        with Horizontal(id="plans-pickers"):
            yield DataTable(id="plan-envs", cursor_type="row")
            yield DataTable(id="plan-releases", cursor_type="row")
        with VerticalScroll(id="plan-pane"):
            yield Static("Pick an environment (enter), then a release (enter) to read its plan.",
                         id="plan-view", markup=False)
            yield Static("", id="plan-refusal", markup=False)
            yield Static("", id="plan-command", classes="hint", markup=False)
            yield Static("", id="deploy-log", markup=False)

    def on_mount(self) -> None:
        for table_id, columns in (("#plan-envs", ENV_COLUMNS), ("#plan-releases", RELEASE_COLUMNS)):
            table = self.query_one(table_id, DataTable)
            for key, label in columns:
                table.add_column(label, key=key)
        self.query_one("#plan-refusal").display = False
        self.query_one("#plan-envs", DataTable).focus()
        self.load()

    # -- loading ---------------------------------------------------------------------------
    @read_worker("plans-load")
    def load(self) -> ChoicesLoaded:
        from engine.environments.listing import list_environments
        from engine.errors import EngineError
        from engine.project import find_project
        from engine.releases.store import release_list

        try:
            project = find_project(self.app.project_dir)
            return ChoicesLoaded(list_environments(project), release_list(project))
        except EngineError as exc:
            return ChoicesLoaded(error=exc)

    def on_choices_loaded(self, message: ChoicesLoaded) -> None:
        self.loads += 1
        status = self.query_one("#plans-status", Static)
        if message.error is not None:
            status.update(f"error: {message.error.message}")
            return
        protected = set(self.app.settings.protected_environments)
        self.environments = [e for e in message.environments.environments if not e.error]
        self.releases = message.releases.releases
        sync_rows(self.query_one("#plan-envs", DataTable), [k for k, _ in ENV_COLUMNS],
                  {e.name: (e.name, e.kind or "-", e.target or "-", "yes" if e.name in protected else "")
                   for e in self.environments})
        sync_rows(self.query_one("#plan-releases", DataTable), [k for k, _ in RELEASE_COLUMNS],
                  {r.version: (r.version, (r.commit or "-")[:10] + ("+dirty" if r.dirty else ""),
                               ", ".join(r.workloads)) for r in self.releases})
        status.update(f"{len(self.environments)} environments, {len(self.releases)} releases   "
                      "(same as: framework env list; framework release list)")
        if not self.releases:
            self.query_one("#plan-view", Static).update(
                "No releases cut yet: cut one with `framework env build <env> --release <version>`.")

    # -- picking ---------------------------------------------------------------------------
    def _selected(self, table_id: str) -> str | None:
        table = self.query_one(table_id, DataTable)
        if not table.row_count:
            return None
        return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)

    @on(DataTable.RowSelected, "#plan-envs")
    def _env_picked(self) -> None:
        self.query_one("#plan-releases", DataTable).focus()

    @on(DataTable.RowSelected, "#plan-releases")
    def _release_picked(self) -> None:
        self.action_plan()

    def _focused_table(self) -> DataTable[str]:
        focused = self.focused
        return focused if isinstance(focused, DataTable) else self.query_one("#plan-envs", DataTable)

    def action_cursor_down(self) -> None:
        self._focused_table().action_cursor_down()

    def action_cursor_up(self) -> None:
        self._focused_table().action_cursor_up()

    def action_reload(self) -> None:
        self.load()

    # -- plan ------------------------------------------------------------------------------
    def action_plan(self) -> None:
        env, version = self._selected("#plan-envs"), self._selected("#plan-releases")
        if env is None or version is None:
            self.notify("pick an environment and a release first", severity="warning")
            return
        self.plan_result, self.plan_for, self.refusal = None, (env, version), None
        self.query_one("#plan-refusal").display = False
        self.query_one("#plan-view", Static).update(f"planning {version} -> {env} ...")
        self.query_one("#plan-command", Static).update(
            "Same as: " + command_line(deploy_argv(env, version, plan=True)))
        self._plan(env, version)

    @read_worker("plans-plan")
    def _plan(self, env: str, version: str) -> PlanComputed:
        from engine.errors import EngineError

        try:
            return PlanComputed(env, version, result=compute_plan(self.app.project_dir, env, version))
        except EngineError as exc:
            return PlanComputed(env, version, error=exc)

    def on_plan_computed(self, message: PlanComputed) -> None:
        if self.plan_for != (message.env, message.version):
            return  # an older plan than the one asked for last
        view = self.query_one("#plan-view", Static)
        if message.error is not None:
            hint = f"\n{message.error.hint}" if message.error.hint else ""
            view.update(f"Cannot plan {message.version} -> {message.env}: {message.error.message}{hint}")
            return
        self.plan_result = result = message.result
        if result.refusal:
            view.update(f"Cannot plan: {result.refusal['message']}")
            return
        view.update(plan_text(result))
        self.query_one("#plan-command", Static).update("Confirm with d.   Same as: " + command_line(self._argv()))

    def _argv(self) -> list[str]:
        assert self.plan_result is not None and self.plan_for is not None
        plan = self.plan_result.deploy_plan
        env, version = self.plan_for
        stops = sorted({f["code"] for f in plan["findings"] if f["severity"] == "stop"}) if plan else []
        return deploy_argv(env, version, approve=plan["digest"] if plan else None, acknowledge=stops,
                           timeout=self.app.settings.deploy_timeout)

    # -- deploy ----------------------------------------------------------------------------
    def action_deploy(self) -> None:
        from screens.deploys.confirm import ConfirmDeployScreen

        if self.deploying:
            self.notify("a deploy started here is still running", severity="warning")
            return
        if self.plan_result is None or self.plan_for is None or self.plan_result.refusal:
            self.notify("read a plan first (p)", severity="warning")
            return
        env, version = self.plan_for
        plan = self.plan_result.deploy_plan
        body = plan_text(self.plan_result)
        if plan and any(f["severity"] == "stop" for f in plan["findings"]):
            body += "\n\nConfirming acknowledges the stop-class findings above."
        protected = env in self.app.settings.protected_environments
        argv = self._argv()
        self.app.push_screen(
            ConfirmDeployScreen(f"Deploy {version} to {env}?", body, command_line(argv), env, protected),
            lambda ok: self._confirmed(bool(ok), env, version, argv))

    def _confirmed(self, ok: bool, env: str, version: str, argv: list[str]) -> None:
        if not ok:
            self.query_one("#deploy-log", Static).update("Not deployed: confirmation declined; no promotion written.")
            return
        plan = self.plan_result.deploy_plan
        self.deploying, self.progress, self.last_deploy = True, [], None
        self.query_one("#deploy-log", Static).update(f"deploying {version} to {env} ...\n$ {command_line(argv)}")
        stops = sorted({f["code"] for f in plan["findings"] if f["severity"] == "stop"}) if plan else []
        self._deploy(env, version, plan["digest"] if plan else None, stops)

    @work(thread=True, exclusive=True, group="plans-deploy")
    def _deploy(self, env: str, version: str, digest: str | None, acknowledge: list[str]) -> None:
        run_deploy(self, self.app.project_dir, env, version, approve=digest, acknowledge=acknowledge,
                   timeout=self.app.settings.deploy_timeout)

    def on_deploy_progress(self, message: DeployProgress) -> None:
        self.progress.append(message.line)
        self.query_one("#deploy-log", Static).update("\n".join(self.progress[-12:]))

    def on_deploy_finished(self, message: DeployFinished) -> None:
        self.deploying = False
        self.last_deploy = message
        log = self.query_one("#deploy-log", Static)
        refusal_box = self.query_one("#plan-refusal", Static)
        if message.error is not None:
            log.update("\n".join([*self.progress[-10:], f"failed (exit {message.error.exit_code}): "
                                  f"{message.error.message}"]))
            return
        result = message.result
        if result.exit_code == 3:  # compare-and-set refusal: the environment moved since the plan was read
            self.refusal = result.refusal
            refusal_box.display = True
            refusal_box.update(f"REFUSED (exit 3, {result.refusal['code']}): {result.refusal['message']}\n"
                               f"The environment moved since this plan was read. Press p to re-plan.")
            return
        phase = (result.rollout or {}).get("phase", "-")
        outcome = "deployed" if result.exit_code == 0 else f"failed (exit {result.exit_code})"
        if result.queued:  # hosted, accepted and recorded, waiting on a person (exit 7)
            where = result.queued.get("action_url") or result.queued.get("action") or ""
            outcome = f"queued (exit 7): waiting on {result.queued.get('wait')}; {where}"
        reason = f": {result.refusal['message']}" if result.refusal else ""
        log.update("\n".join([*self.progress[-10:], f"{outcome}{reason}; rollout {phase}"]))
        self.load()
