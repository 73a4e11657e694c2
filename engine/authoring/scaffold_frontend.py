"""`framework scaffold frontend <name>` and `project new --frontend` (docs/reference-frontends.md#scaffold-frontend).

Plan files -> write in a throwaway copy -> `npm ci` from the template's lockfile (while framework.yaml
and the dev KCL are updated and checked) -> the new frontend's typed client alone (`generate_frontend`,
when the project's last `generate` was current; else a whole `generate`) -> carry over: a failure
anywhere (npm, buf, protoc-gen-es) leaves the checkout as it was. The installed node_modules is renamed
into place last (the copy sits beside the project, on its filesystem), so nothing is installed twice.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pydantic import BaseModel

from engine.authoring import naming, sandbox, tools
from engine.authoring.config import append_list_item, load
from engine.authoring.frontends import FrontendEntry, add_to_kcl, check_entry, client_name, entries, template_files
from engine.authoring.generate import GenerateResult, current, generate, generate_frontend
from engine.authoring.plan import Plan
from engine.errors import InvalidInput
from engine.paths import atomic_write_bytes
from engine.project import Project

DEV_KCL = Path("deploy") / "kcl" / "dev" / "main.k"


class FrontendResult(BaseModel):
    what: str = "scaffold frontend"
    name: str
    kind: str
    dir: str
    port: int
    output: str
    base_path: str = ""
    routes: list[str] = []
    dry_run: bool = False
    installed: bool = False  # `npm ci` ran (not under --dry-run or --no-install)
    install_seconds: float | None = None
    seconds: dict[str, float] = {}  # per step: copy, install, generate, carry (bench/frontends.py reads them)
    files: list[dict[str, str]] = []  # path and change: created | modified | removed
    generated: GenerateResult | None = None


def npm() -> str:
    found = shutil.which("npm")
    if not found:
        raise tools.ToolMissing("npm is not installed", hint="install Node.js 20 or later (it brings npm)")
    return found


def npm_ci(where: Path) -> float:
    """`npm ci` from the lockfile the scaffold wrote (the npm cache makes a second one quick)."""
    import time

    start = time.monotonic()
    argv = [npm(), "ci", "--no-audit", "--no-fund", "--loglevel=error"]
    env = {**os.environ, "NEXT_TELEMETRY_DISABLED": "1"}
    try:
        tools.run([*argv, "--prefer-offline"], where, f"npm ci in {where.name}", env=env)
    except tools.ToolFailed as exc:
        if "notarget" not in exc.message and "ETARGET" not in exc.message:
            raise
        # A package metadata document cached before a newer version was published: ask the registry.
        tools.run(argv, where, f"npm ci in {where.name}", env=env)
    return round(time.monotonic() - start, 3)


def _first_service(root: Path, services: list[dict[str, object]]) -> tuple[str, str] | None:
    """(client helper, service name) of the first service whose proto has Ping: the page calls it."""
    for svc in services:
        proto = root / str(svc.get("proto") or "")
        if not proto.is_file():
            continue
        text = proto.read_text(encoding="utf-8")
        m = re.search(r"^service\s+(\w+)\s*\{", text, re.M)
        if m and re.search(r"\brpc\s+Ping\s*\(", text):
            return client_name(naming.service_key(m[1])), m[1]
    return None


def scaffold_frontend(project: Project, entry: FrontendEntry, *, dry_run: bool = False, install: bool = True,
                      by: str = "scaffold frontend") -> FrontendResult:
    check_entry(entry)
    naming.check_name(entry.name, "frontend")
    if not re.fullmatch(r"[a-z][a-z0-9-]{0,52}", entry.name):
        raise InvalidInput(f"frontend name {entry.name!r}: a lowercase DNS label (letters, digits, '-')")
    known = entries(project.config, project.config_path)
    if any(f.name == entry.name for f in known):
        raise InvalidInput(f"frontend {entry.name} exists in framework.yaml", hint="choose another name")
    if (project.root / entry.dir).exists():
        raise InvalidInput(f"{entry.dir} exists", hint="choose another name, or move that directory away")
    if install and not dry_run:
        npm()
    parent = project.root.parent if os.access(project.root.parent, os.W_OK) else None
    result = FrontendResult(name=entry.name, kind=entry.kind, dir=entry.dir, port=entry.port, output=entry.output,
                            base_path=entry.base_path, routes=entry.routes, dry_run=dry_run)
    import time

    clock = time.monotonic()

    def step(name: str) -> None:
        nonlocal clock
        now = time.monotonic()
        result.seconds[name] = round(now - clock, 3)
        clock = now

    with tempfile.TemporaryDirectory(prefix=".framework-frontend-", dir=parent) as tmp:
        target = Project(sandbox.copy(project.root, Path(tmp) / "copy"))
        for other in known:  # the copy leaves node_modules out: the others' protoc-gen-es is linked in
            modules = project.root / other.dir / "node_modules"
            if modules.is_dir() and (target.root / other.dir).is_dir():
                (target.root / other.dir / "node_modules").symlink_to(modules, target_is_directory=True)
        cfg = load(target)
        fresh = install and not dry_run and current(target)  # before anything here changes
        plan = Plan()
        for path, text in template_files(entry, _first_service(target.root, cfg.services)).items():
            plan.scaffold(path, text, mode=0o644)
        plan.apply(target.root, by)
        with ThreadPoolExecutor(max_workers=1) as pool:  # leaving it waits for npm: the copy outlives it
            installing = pool.submit(npm_ci, target.root / entry.dir) if install and not dry_run else None
            append_list_item(target.config_path, "frontends", entry.as_config())
            kcl = target.root / DEV_KCL
            if kcl.is_file() and cfg.enabled("deploy"):
                atomic_write_bytes(kcl, add_to_kcl(kcl.read_text(encoding="utf-8"), entry).encode("utf-8"))
                _check_kcl(target, kcl)
            step("copy")
            if installing is not None:
                result.install_seconds = installing.result()
                result.installed = True
                step("install")
        if result.installed:
            made = Project(target.root)
            result.generated = generate_frontend(made, entry, by=by) if fresh else generate(made, by=by)
            step("generate")
        modules = target.root / entry.dir / "node_modules"
        if modules.is_dir():  # out of the copy before it is compared: nothing to walk there
            modules = modules.rename(Path(tmp) / "node_modules")
        changes = sandbox.diff(project.root, target.root)
        if not dry_run:
            sandbox.carry_over(target.root, project.root, changes)
            if modules.is_dir():
                shutil.move(str(modules), str(project.root / entry.dir / "node_modules"))
        step("carry")
    result.files = [{"path": p, "change": c} for p, c in changes]
    return result


def _check_kcl(project: Project, path: Path) -> None:
    """The dev environment still evaluates with the frontend in it (never leave a main.k that does not)."""
    from engine.kcl.evaluate import evaluate

    evaluate(path, kcl_root=path.parent, relative_to=project.root, use_cache=False)


def build_frontend(project: Project, entry: FrontendEntry) -> tuple[str, float]:
    """The kind's own build in the frontend's directory (`next build`, `vite build`, `expo export`)."""
    import time

    where = project.root / entry.dir
    if not (where / "node_modules").is_dir():
        raise tools.ToolMissing(f"frontend {entry.name}: its packages are not installed ({entry.dir}/node_modules)",
                                hint=f"cd {entry.dir} && npm ci")
    start = time.monotonic()
    env = {**os.environ, "NEXT_TELEMETRY_DISABLED": "1", "CI": "1"}
    if entry.base_path:
        env.setdefault("FRAMEWORK_BASE_PATH", entry.base_path)
    try:
        proc = subprocess.run(entry.build_command, cwd=where, capture_output=True, text=True, env=env, timeout=900)
    except FileNotFoundError as exc:
        raise tools.ToolMissing(f"frontend {entry.name}: {entry.build_command[0]} is missing",
                                hint=f"cd {entry.dir} && npm ci") from exc
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip()
        raise tools.ToolFailed(f"build of frontend {entry.name} ({' '.join(entry.build_command)}) failed "
                               f"(exit {proc.returncode})" + (f":\n{detail[-3000:]}" if detail else ""))
    return proc.stdout[-2000:], round(time.monotonic() - start, 3)
