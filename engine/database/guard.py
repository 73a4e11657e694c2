"""Which database a dev-only command may touch (docs/reference-db.md#seeds: Guards; docs/reference-db.md#db-reset).

- dev only: the environment (default `dev`) must be a development one: kind `local`.
- The environment's declared DSN is the `DATABASE_URL` its workloads are given.
- seeds: a loopback DSN is accepted; a non-loopback one must be the environment's own or carry
  `--allow-remote-dsn`.
- reset: the DSN must equal the environment's declared one (arbitrary loopback DSNs refused).
- seeds refuse on pending or dirty migrations.
"""

from __future__ import annotations

from engine.database import dsn as dsns
from engine.database.errors import Refused
from engine.environments.model import EnvironmentSpec
from engine.project import Project

DEFAULT_ENV = "dev"


def environment(project: Project, name: str, options: dict[str, str] | None = None) -> EnvironmentSpec:
    from engine.environments.evaluate import evaluate_environment
    from engine.environments.options import validate_options

    env = evaluate_environment(project, name, validate_options(project, name, options or {}))
    if env.kind != "local":
        raise Refused(f"environment {name!r} is {env.kind}, not a development environment: "
                      "seeding and resetting are dev only", hint="use a local environment, e.g. --env dev")
    return env


def declared_dsn(env: EnvironmentSpec) -> dsns.Dsn | None:
    """The first DATABASE_URL a workload of the environment is given."""
    for w in env.workloads:
        url = w.env.get("DATABASE_URL")
        if url:
            return dsns.parse(url)
    return None


def seed_target(project: Project, dsn: str | None, env_name: str | None, allow_remote: bool,
                options: dict[str, str] | None = None) -> dsns.Dsn:
    given = dsns.resolve(dsn, required=False)
    if given is not None and given.is_loopback and env_name is None:
        return given  # loopback databases accepted (seed guards)
    name = env_name or DEFAULT_ENV
    env = environment(project, name, options)
    declared = declared_dsn(env)
    if given is None:
        if declared is None:
            raise Refused(f"no database: pass --dsn, set DATABASE_URL, or give a workload of {name!r} a DATABASE_URL")
        return declared
    if not given.is_loopback and not allow_remote and not (declared and declared.same_database(given)):
        raise Refused(f"{given.redacted} is not on this machine and not environment {name!r}'s database",
                      hint="pass --allow-remote-dsn if you mean it")
    return given


def reset_target(project: Project, dsn: str | None, env_name: str | None,
                 options: dict[str, str] | None = None) -> dsns.Dsn:
    name = env_name or DEFAULT_ENV
    env = environment(project, name, options)
    declared = declared_dsn(env)
    if declared is None:
        raise Refused(f"environment {name!r} declares no database (no workload has DATABASE_URL): "
                      "db reset only resets an environment's declared database")
    given = dsns.resolve(dsn, required=False)
    if given is not None and not given.same_database(declared):
        raise Refused(f"{given.redacted} is not environment {name!r}'s declared database ({declared.redacted}); "
                      "db reset refuses any other, loopback ones included")
    return given or declared


def migrations_clean(target: dsns.Dsn, project: Project) -> None:
    """A seed guard: refused when schema migrations are pending or dirty."""
    from engine.database import files, runner

    if not (project.root / files.MIGRATIONS_DIR).is_dir():
        return  # a schema made otherwise: nothing can be pending
    state = runner.status(target, files.load(project.root / files.MIGRATIONS_DIR))
    if state.dirty:
        raise Refused(f"the database is dirty at version {state.version}: seeds wait for a clean schema",
                      hint=runner.dirty_hint(state.version or runner.NIL_VERSION,
                                             files.load(project.root / files.MIGRATIONS_DIR)))
    if state.pending:
        raise Refused(f"{len(state.pending)} migrations are pending (first: {state.pending[0].file}): "
                      "seeds wait for the schema", hint="framework db migrate up")
