"""The environment detail shows the declared database's migration state and seed counts
(docs/reference-db.md#env-up-and-the-dashboard)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from screen_fixtures import SIZE  # noqa: E402

from app.dashboard import Dashboard  # noqa: E402
from app.settings import deterministic_settings  # noqa: E402
from tests.database_fixtures import fw, without_demo_database, write  # noqa: E402
from tests.pg_fixtures import pg_url  # noqa: E402,F401
from tests.test_database_reset_introspect import DB_ENV  # noqa: E402
from tests.waiting import until_app


def test_environment_detail_shows_migration_state_and_seed_counts(demo_project: Path, pg_url: str) -> None:
    """Same data as `db migrate status` and `db seed status`: version, applied and pending counts,
    seeded rows per table; an environment without a database shows no database section."""
    without_demo_database(demo_project)
    write(demo_project / "deploy" / "kcl" / "devdb", {"main.k": DB_ENV.format(name="devdb", kind="local", url=pg_url)})
    write(demo_project / "db" / "migrations", {
        "20240101000000_t.up.sql": "CREATE TABLE things (id bigserial PRIMARY KEY, label text);\n",
        "20240102000000_u.up.sql": "CREATE TABLE more_things (id bigserial PRIMARY KEY);\n"})
    assert fw("db", "migrate", "up", "--dsn", pg_url, "--dir", str(demo_project / "db" / "migrations"),
              cwd=demo_project)[0] == 0
    assert fw("db", "seed", "apply", "--dsn", pg_url, cwd=demo_project)[0] == 0

    async def scenario() -> None:
        from screens.environments.detail import EnvironmentDetailScreen

        app = Dashboard(project_dir=demo_project, settings=deterministic_settings())
        async with app.run_test(size=SIZE) as pilot:
            screen = EnvironmentDetailScreen("devdb")
            await app.push_screen(screen)
            await until_app(pilot, lambda: screen.loads >= 1)
            database = screen.query_one("#database")
            text = str(database.render())
            assert database.display
            assert "migrations: version 20240102000000, 2 applied, 0 pending" in text
            assert "seeded rows: more_things 10, things 10" in text
            plain = EnvironmentDetailScreen("dev")
            await app.push_screen(plain)
            await until_app(pilot, lambda: plain.loads >= 1)
            assert not plain.query_one("#database").display

    asyncio.run(scenario())
