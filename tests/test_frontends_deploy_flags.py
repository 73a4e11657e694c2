"""`env deploy --skip-frontend` and `--frontends-only` on a hosted environment, against a real `platform server`
(docs/reference-frontends.md#deploying-frontends): the control plane serves a promoted release whole, so each
flag says which part must stay as it runs, and is honoured exactly when the release agrees."""

from __future__ import annotations

from tests.deploy_fixtures import Demo
from tests.hosted_fixtures import Server, commit, demo, hosted_env, mint, plane, seed_org, server_factory  # noqa: F401,F811

SITE = 'framework.Frontend {name = "site", dir = "site", build = "mkdir -p dist && cp src/index.html dist/index.html"}'


def _page(demo: Demo, text: str) -> None:  # noqa: F811
    (demo.root / "site" / "src").mkdir(parents=True, exist_ok=True)
    (demo.root / "site" / "src" / "index.html").write_text(f"<p>{text}</p>\n")
    commit(demo, f"page {text}")


def _current(demo: Demo) -> str | None:  # noqa: F811
    code, doc = demo.json("env", "status", "cloud")
    assert code == 0, doc
    return doc["environments"][0]["release"]


def test_hosted_skip_frontend_and_frontends_only_keep_the_running_part(plane: Server, demo: Demo) -> None:  # noqa: F811
    """Refused (exit 1, nothing promoted) when nothing runs yet and when the release changes the part the flag
    keeps, naming it; accepted with a notice when the release carries the same frontend files
    (--skip-frontend) or the same workload images (--frontends-only) as the running release."""
    seed_org(plane, "acme")
    demo.env["FRAMEWORK_CONTROL_PLANE_TOKEN"] = mint(plane, "acme")
    hosted_env(demo, plane.url)
    path = demo.root / "deploy" / "kcl" / "cloud" / "main.k"
    path.write_text(path.read_text().rstrip().removesuffix("}").rstrip() + f"\n    frontends = [{SITE}]\n}}\n")
    _page(demo, "one")
    assert demo.json("env", "build", "cloud", "--release", "v1")[0] == 0
    code, doc = demo.json("env", "deploy", "cloud", "v1", "--skip-frontend", "--yes")
    assert code == 1 and "runs no release yet, so there is nothing to keep" in doc["error"]["message"], doc
    code, doc = demo.json("env", "deploy", "cloud", "v1", "--yes", "--timeout", "60")
    assert code == 0, doc

    _page(demo, "two")  # only the frontend's files change
    assert demo.json("env", "build", "cloud", "--release", "v2")[0] == 0
    code, doc = demo.json("env", "deploy", "cloud", "v2", "--skip-frontend", "--yes")
    assert code == 1 and doc["error"]["code"] == "invalid_input", doc
    assert doc["error"]["message"] == ("--skip-frontend cannot be honoured: the control plane serves a release whole, "
                                       "and v2 carries other frontend files than the running release v1 for site")
    assert _current(demo) == "v1"
    code, doc = demo.json("env", "deploy", "cloud", "v2", "--frontends-only", "--yes", "--timeout", "60")
    assert code == 0, doc
    assert doc["notices"] == ["--frontends-only: the release carries the same workload images as the running "
                              "release v1; they stay as they are"]
    assert _current(demo) == "v2"

    main = demo.root / "services" / "api" / "main.py"
    main.write_text(main.read_text() + "\n# a workload change\n")
    commit(demo, "a workload change")
    assert demo.json("env", "build", "cloud", "--release", "v3")[0] == 0
    code, doc = demo.json("env", "deploy", "cloud", "v3", "--frontends-only", "--yes")
    assert code == 1 and "carries other workload images than the running release v2 for api" in doc["error"]["message"]
    assert _current(demo) == "v2"
    code, doc = demo.json("env", "deploy", "cloud", "v3", "--skip-frontend", "--yes", "--timeout", "60")
    assert code == 0, doc
    assert doc["notices"] == ["--skip-frontend: the release carries the same frontend files as the running release "
                              "v2; they stay as they are"]
    assert _current(demo) == "v3"
