"""The mobile (Expo) frontend kind: only its web export is built and tested here (native builds need Xcode or
the Android SDK: docs/reference-frontends.md). Its packages (724, about 400 MB) and the export cost about
80 CPU-seconds; it runs in every suite all the same (a kind the scaffold offers is a kind the suite builds)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests import frontend_fixtures
from tests.frontend_fixtures import FrontendProject, free_port

pytestmark = [pytest.mark.timeout(1200)]


@pytest.fixture(scope="module")
def mobile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FrontendProject]:
    """`project new shop`, `scaffold frontend app --kind mobile --base-path /app`, `build`."""
    parent = tmp_path_factory.mktemp("mobile")
    env = frontend_fixtures.fixture_env(parent)
    fp = FrontendProject(root=parent, env=env, api_port=free_port(), site_port=0, spa_port=0)
    code, doc, err = fp.fw("project", "new", "shop", "--mod", "example.com/shop")
    assert code == 0, err or doc
    fp.root = parent / "shop"
    code, doc, err = fp.fw("scaffold", "frontend", "app", "--kind", "mobile", "--base-path", "/app")
    assert code == 0, err or doc
    code, doc, err = fp.fw("build")
    assert code == 0, err or doc
    yield fp


def test_mobile_web_export_is_built_under_its_base_path(mobile: FrontendProject) -> None:
    """docs/reference-frontends.md#build: `framework build` runs `expo export --platform web` into dist/, its
    bundle referenced under the base path (Expo's experiments.baseUrl); the generated client reads
    EXPO_PUBLIC_API_URL."""
    index = (mobile.root / "frontends/app/dist/index.html").read_text()
    assert '/app/_expo/static/js/web/' in index
    clients = (mobile.root / "frontends/app/src/gen/framework/clients.ts").read_text()
    assert "process.env.EXPO_PUBLIC_API_URL" in clients and "export function shopClient()" in clients


def test_eslint_and_tsc_pass_on_the_mobile_frontend(mobile: FrontendProject) -> None:
    """docs/reference-frontends.md#scaffold-frontend: the scaffolded Expo app passes its eslint and tsc."""
    for argv in (["eslint", "."], ["tsc", "--noEmit"]):
        proc = mobile.bin("app", *argv)
        assert proc.returncode == 0, f"{argv}:\n{proc.stdout}\n{proc.stderr}"
