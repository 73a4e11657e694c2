"""`framework scaffold scenario <name>` (docs/reference-frontends.md#scenarios): an end-to-end scenario is
a Playwright test (`scenarios/<name>.scenario.ts`) that drives one frontend of the running dev stack in
the machine's headless Chromium. The first scenario also writes the scenarios package (pinned
@playwright/test and its lockfile, the Playwright config, `support/stack.ts`) and installs it with
`npm ci`. Every file is scaffold-once: yours from birth, recorded in .framework/scaffolded.json.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

from pydantic import BaseModel

from engine.authoring import naming
from engine.authoring.frontend_config import pick_frontend
from engine.authoring.frontends import FrontendEntry
from engine.authoring.plan import Plan
from engine.authoring.scaffold_frontend import npm_ci
from engine.authoring.templates import render
from engine.errors import InvalidInput, NotFound, UsageError
from engine.project import Project

DIR = "scenarios"
SUFFIX = ".scenario.ts"
# The package every scenario shares, written with the first one (template -> path under scenarios/).
SUPPORT = {"package.json.tmpl": "package.json", "package-lock.json.tmpl": "package-lock.json",
           "playwright.config.ts.tmpl": "playwright.config.ts", "stack.ts.tmpl": "support/stack.ts",
           "gitignore.tmpl": ".gitignore"}
FRONTEND_LINE = re.compile(r"^const frontend = \{.*\};.*$", re.MULTILINE)


class ScenarioResult(BaseModel):
    name: str
    path: str
    frontend: str
    source: str | None = None  # --from
    dry_run: bool = False
    files: list[dict[str, str]] = []  # path and status: created | exists
    installed: bool = False  # npm ci ran in scenarios/
    run: str  # how to run it


def _frontend_line(entry: FrontendEntry) -> str:
    return (f'const frontend = {{ name: "{entry.name}", port: {entry.port}, basePath: "{entry.base_path}" }}; '
            "// the frontend this scenario drives")


def _copy(project: Project, source: str, name: str, entry: FrontendEntry | None) -> str:
    """--from: the source scenario's text, its name replaced where the scaffold wrote it (header, title,
    run hint); with --frontend, retargeted."""
    path = project.root / DIR / f"{source}{SUFFIX}"
    if not path.is_file():
        found = sorted(p.name[:-len(SUFFIX)] for p in (project.root / DIR).glob(f"*{SUFFIX}"))
        raise NotFound(f"no scenario {source!r}: {DIR}/{source}{SUFFIX} does not exist",
                       hint=f"scenarios: {', '.join(found) or 'none yet'}")
    text = path.read_text(encoding="utf-8")
    text = text.replace(f"framework scenario: {source} ", f"framework scenario: {name} ")
    text = text.replace(f'test.describe("{source}"', f'test.describe("{name}"')
    text = text.replace(f"npx playwright test {source}`", f"npx playwright test {name}`")
    if entry is not None:
        if not FRONTEND_LINE.search(text):
            raise InvalidInput(f"--frontend: {DIR}/{source}{SUFFIX} has no `const frontend = {{...}};` line to "
                               "retarget", hint="copy it without --frontend and edit the copy")
        text = FRONTEND_LINE.sub(_frontend_line(entry), text, count=1)
    return text


def scaffold_scenario(project: Project, name: str, *, source: str | None = None, frontend: str | None = None,
                      install: bool = True, dry_run: bool = False) -> ScenarioResult:
    scenario = naming.check_name(name, "scenario")
    if source is not None:
        source = naming.check_name(source, "scenario")
        if source == scenario:
            raise UsageError(f"--from {source}: a scenario cannot be copied onto itself")
    rel = f"{DIR}/{scenario}{SUFFIX}"
    if (project.root / rel).exists():
        raise InvalidInput(f"{rel} exists (it is yours: scaffolds never overwrite it)",
                           hint="pick another name, or --from it to start a copy")
    if source is not None:
        text = _copy(project, source, scenario, pick_frontend(project, frontend) if frontend else None)
        target = frontend or _target_of(text)
    else:
        entry = pick_frontend(project, frontend)
        text = render("scenario/scenario.ts.tmpl", name=scenario, frontend=entry.name,
                      port=entry.port, base_path=entry.base_path)
        target = entry.name
    plan = Plan()
    for template, path in SUPPORT.items():
        plan.scaffold(f"{DIR}/{path}", render(f"scenario/{template}"))
    plan.scaffold(rel, text)
    where = project.root / DIR
    need_install = install and not dry_run and not (where / "node_modules").is_dir()
    staging = _install(project, where, plan) if need_install else None
    try:
        results = plan.apply(project.root, "scaffold scenario", dry_run=dry_run)
        if staging is not None:
            (staging / "node_modules").rename(where / "node_modules")
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
    return ScenarioResult(
        name=scenario, path=rel, frontend=target, source=source, dry_run=dry_run, installed=need_install,
        files=[{"path": r.path, "status": r.status} for r in results],
        run=f"framework env up dev --background && (cd {DIR} && npx playwright test {scenario})")


def _install(project: Project, where: Path, plan: Plan) -> Path | None:
    """`npm ci` before anything is written (a failure leaves the checkout as it was): in scenarios/ when
    its package.json exists, else in a staging directory whose node_modules is moved in afterwards."""
    if (where / "package.json").is_file():
        npm_ci(where)
        return None
    staging = Path(tempfile.mkdtemp(prefix=".scenarios-install-", dir=project.root))
    try:
        for name in ("package.json", "package-lock.json"):
            (staging / name).write_text(plan.files[f"{DIR}/{name}"].content, encoding="utf-8")
        npm_ci(staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return staging


def _target_of(text: str) -> str:
    found = re.search(r'^const frontend = \{ name: "([^"]+)"', text, re.MULTILINE)
    return found.group(1) if found else "?"
