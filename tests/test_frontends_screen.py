"""Frontends in the dashboard's environment detail (docs/reference-frontends.md#dashboard): each frontend's
dev server URL, whether `env up` runs it, its build state and last build; `o` opens the URL."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from screen_fixtures import SIZE  # noqa: E402

from app.dashboard import Dashboard  # noqa: E402
from app.settings import deterministic_settings  # noqa: E402
from tests.waiting import until, until_app  # noqa: E402

WEB_ENV = '''import framework

environment = framework.Environment {
    name = "web"
    kind = "local"
    target = framework.Process {}
    workloads = [framework.Workload {name = "api", run = ["python3", "services/api/main.py"]}]
    frontends = [
        framework.Frontend {
            name = "site"
            dir = "frontends/site"
            dev = ["node_modules/.bin/next", "dev"]
            output = "out"
            port = 3000
        }
        framework.Frontend {
            name = "spa"
            dir = "frontends/spa"
            dev = ["node_modules/.bin/vite"]
            port = 5173
            base_path = "/spa"
        }
    ]
}
'''


def test_environment_detail_lists_frontends_and_o_opens_the_dev_server(demo_project: Path, tmp_path: Path,
                                                                        monkeypatch) -> None:
    """The Frontends table: the dev server URL with the base path, running no (no dev stack), build state from
    the built output directory; `o` hands the selected row's URL to $BROWSER; an environment without
    frontends shows no Frontends section."""
    env_dir = demo_project / "deploy" / "kcl" / "web"
    env_dir.mkdir(parents=True)
    (env_dir / "main.k").write_text(WEB_ENV)
    (demo_project / "frontends" / "site" / "out").mkdir(parents=True)
    (demo_project / "frontends" / "site" / "out" / "index.html").write_text("<p>built</p>")
    urls = tmp_path / "urls"
    script = tmp_path / "browser.sh"
    script.write_text(f'#!/bin/sh\necho "$1" >> {urls}\n')
    script.chmod(0o755)
    monkeypatch.setenv("BROWSER", str(script))

    async def scenario() -> None:
        from screens.environments.detail import EnvironmentDetailScreen

        app = Dashboard(project_dir=demo_project, settings=deterministic_settings())
        async with app.run_test(size=SIZE) as pilot:
            screen = EnvironmentDetailScreen("web")
            await app.push_screen(screen)
            await until_app(pilot, lambda: screen.loads >= 1)
            table = screen.query_one("#frontends-table")
            assert table.display
            rows = {str(table.get_row_at(i)[0]): table.get_row_at(i) for i in range(table.row_count)}
            assert rows["site"][1:4] == ["http://127.0.0.1:3000/", "no", "built"]
            assert rows["spa"][1:4] == ["http://127.0.0.1:5173/spa/", "no", "not built"]
            assert rows["spa"][4] == "-"
            table.focus()
            table.move_cursor(row=[str(table.get_row_at(i)[0]) for i in range(table.row_count)].index("spa"))
            await pilot.press("o")
            await until_app(pilot, lambda: urls.is_file() and urls.read_text().strip() != "",
                            what="the URL handed to $BROWSER")
            plain = EnvironmentDetailScreen("dev")
            await app.push_screen(plain)
            await until_app(pilot, lambda: plain.loads >= 1)
            assert not plain.query_one("#frontends-table").display

    asyncio.run(scenario())
    assert until(lambda: urls.read_text().strip(), 10, "the URL file") == "http://127.0.0.1:5173/spa/"
