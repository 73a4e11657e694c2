"""`framework scaffold frontend`'s guarantees around its concurrent `npm ci`
(docs/reference-frontends.md#scaffold-frontend): a failing install leaves the checkout as it was;
`--dry-run` writes nothing. Both on a private copy of the session's authored project, with a real npm
that cannot install (offline, an empty cache)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.authoring_fixtures import _GO_ENV, authored, project_copy, tree  # noqa: F401
from tests.conftest import run_cli


def _scaffold(root: Path, *args: str, cache: Path) -> tuple[int, dict, str]:
    import json

    env = {**_GO_ENV, "GOFLAGS": "-buildvcs=false", "npm_config_cache": str(cache), "npm_config_offline": "true"}
    result = run_cli("framework", "scaffold", "frontend", "web", *args, "--json", cwd=root, env=env, timeout=300)
    return result.exit_code, json.loads(result.stdout), result.stderr


def test_a_failing_npm_ci_leaves_the_checkout_as_it_was(project_copy: Path, tmp_path: Path) -> None:  # noqa: F811
    """docs/reference-frontends.md#scaffold-frontend: a failure anywhere leaves the checkout as it was. `npm ci`
    runs while framework.yaml and the dev KCL are updated in the throwaway copy; when it fails (offline, nothing
    cached) the command is exit 1 naming it, no file of the project changed and no staging copy is left beside it."""
    before = tree(project_copy)
    code, doc, err = _scaffold(project_copy, cache=tmp_path / "empty-cache")
    assert code == 1, (doc, err)
    assert doc["ok"] is False and doc["error"]["code"] == "tool_failed" and "npm ci" in doc["error"]["message"]
    assert "Traceback" not in err
    assert tree(project_copy) == before
    assert not (project_copy / "frontends").exists()
    assert not [p.name for p in project_copy.parent.iterdir() if p.name.startswith(".framework-frontend-")]


def test_dry_run_writes_nothing_and_installs_nothing(project_copy: Path, tmp_path: Path) -> None:  # noqa: F811
    """docs/reference-frontends.md#scaffold-frontend: `--dry-run` lists the files it would write (framework.yaml,
    the dev KCL, the template), writes none and starts no `npm ci`."""
    before = tree(project_copy)
    code, doc, err = _scaffold(project_copy, "--dry-run", cache=tmp_path / "empty-cache")
    assert code == 0, (doc, err)
    paths = {f["path"] for f in doc["files"]}
    assert {"framework.yaml", "deploy/kcl/dev/main.k", "frontends/web/package-lock.json"} <= paths
    assert doc["dry_run"] is True and doc["installed"] is False and doc["generated"] is None
    assert tree(project_copy) == before
    assert not (tmp_path / "empty-cache").exists() or not os.listdir(tmp_path / "empty-cache")
