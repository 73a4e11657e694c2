"""`framework doctor`, the machine's side: port blocks, the dev-stack ceiling, the platform server and
daemon instances (docs/reference-ci.md#commands: `port-blocks`, `dev-stack-ceiling`, `server`, `daemon`)."""

from __future__ import annotations

from engine.doctor.model import ERROR, OK, SKIP, WARN, Check
from engine.errors import EngineError
from engine.project import Project


def port_block_checks(project: Project) -> list[Check]:
    from engine.devstack.blocks import list_blocks

    try:
        blocks = list_blocks(project)
    except EngineError as exc:
        fix = exc.hint or "fix framework.yaml dev_stack.max_stacks"
        return [Check(name="port-blocks", status=ERROR, detail=exc.message, fix=fix)]
    gone = [b.key for b in blocks.blocks if b.origin_exists is False]
    held = len(blocks.blocks)
    checks = [Check(name="port-blocks", status=WARN if gone else OK,
                    detail=(f"{held} block(s) in {blocks.registry}"
                            + (f"; worktrees gone for {', '.join(gone)}" if gone else "")),
                    fix="framework env devstack prune" if gone else None)]
    ceiling = blocks.max_stacks
    if held >= ceiling:
        checks.append(Check(name="dev-stack-ceiling", status=WARN,
                            detail=f"all {ceiling} blocks (dev_stack.max_stacks) are held: a new worktree's "
                                   "`env up` will be refused",
                            fix="framework env devstack prune, or raise dev_stack.max_stacks in framework.yaml"))
    else:
        checks.append(Check(name="dev-stack-ceiling", status=OK,
                            detail=f"{held} of {ceiling} blocks held (dev_stack.max_stacks)"))
    return checks


def server_check(timeout: float = 3.0) -> Check:
    import httpx

    from engine.auth.credentials import resolve_platform

    resolved = resolve_platform()
    if resolved.server_source == "default" and resolved.token is None:
        return Check(name="server", status=SKIP, detail="no platform server configured (PLATFORM_SERVER_URL "
                     "unset, no login)", fix=None)
    try:
        resp = httpx.get(resolved.server.rstrip("/") + "/health", timeout=timeout)
    except httpx.HTTPError as exc:
        return Check(name="server", status=WARN, detail=f"{resolved.server} unreachable: {exc or type(exc).__name__}",
                     fix="start it (platform server) or fix PLATFORM_SERVER_URL")
    if resp.status_code != 200:
        return Check(name="server", status=WARN, detail=f"{resolved.server}/health answered {resp.status_code}",
                     fix="check the server's log")
    login = f", logged in ({resolved.token_source})" if resolved.token else ", not logged in"
    return Check(name="server", status=OK, detail=f"{resolved.server} reachable{login}",
                 fix=None if resolved.token else f"platform auth login --server {resolved.server}")


def daemon_check() -> Check:
    from engine.daemon.instances import list_instances

    found = list_instances()
    if not found.instances:
        return Check(name="daemon", status=OK, detail=f"no daemon instance under {found.home}")
    waiting = [i.name for i in found.instances if i.running and i.state == "awaiting_credentials"]
    leftover = [i.name for i in found.instances if not i.running and i.record is not None]
    running = [i.name for i in found.instances if i.running]
    if waiting:
        return Check(name="daemon", status=WARN, detail=f"awaiting credentials: {', '.join(waiting)}",
                     fix="platform auth login, then the daemon continues by itself")
    if leftover:
        return Check(name="daemon", status=WARN, detail=f"leftover runtime record of {', '.join(leftover)}",
                     fix="platform daemon start (or remove the instance directory)")
    return Check(name="daemon", status=OK, detail=f"running: {', '.join(running) or 'none'}")


def machine_checks(project: Project | None) -> list[Check]:
    checks = port_block_checks(project) if project is not None else []
    return checks + [server_check(), daemon_check()]
