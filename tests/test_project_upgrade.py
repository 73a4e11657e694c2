"""`framework project upgrade`, `upgrade list`, `upgrade apply` (docs/reference-project.md#project-upgrade) on a
project made by `project new` at the previous shipped release (0.0.9), one per module, copied per test."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from engine.authoring import markers
from engine.project import Project
from tests.authoring_fixtures import _GO_ENV, fw, fw_text, git, go, go_caches, go_trimpath, tree  # noqa: F401

# -trimpath: the copies of the generated project share the machine's Go build cache (tests/authoring_fixtures.py).
pytestmark = pytest.mark.usefixtures("go_trimpath")

OLD = "0.0.9"
BOOT = "internal/bootstrap/bootstrap.go"
CI = ".github/workflows/ci.yml"
CHANGING_NEW = "internal/bootstrap/bootstrap_test.go"
PLAYBOOKS = ["0.1.0-bootstrap-test", "0.1.0-bootstrap-version", "0.1.0-ci-vet", "0.1.0-handler-harness"]
CHANGING = {CI: "skipped-scaffold-once", BOOT: "changed", "internal/bootstrap/bootstrap_test.go": "new",
            "internal/bootstrap/version.go": "removed", "internal/handlers/order/handler_test.go": "changed",
            "internal/handlers/order/harness_test.go": "new"}


@pytest.fixture(scope="module")
def old_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`project new shop --service order` at release 0.0.9 (its templates, its pin): created once, read only."""
    from engine import __version__
    from engine.authoring.new import new_project

    assert __version__ != OLD
    parent = tmp_path_factory.mktemp("upgrade")
    for key, value in {**_GO_ENV, "GOFLAGS": "-buildvcs=false"}.items():
        os.environ.setdefault(key, value)
    new_project("shop", parent=parent, module="example.com/shop", service="order", version=OLD)
    return parent / "shop"


@pytest.fixture
def shop(old_project: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(old_project, tmp_path / "shop", symlinks=True))


def _upgrade(root: Path, **kwargs: object):  # noqa: ANN202 - the engine's UpgradeResult
    from engine.upgrade.upgrade import upgrade

    return upgrade(Project(root), **kwargs)  # type: ignore[arg-type]


def test_check_lists_exactly_the_files_that_change(shop: Path) -> None:
    """docs/reference-project.md#project-upgrade: `--check` between the two shipped releases lists exactly the
    files the upgrade changes (a changed bootstrap, a new generated test, a removed generated file, the
    scaffold-once CI workflow skipped), writes nothing; `--check <path>` prints that file's unified diff; an
    unknown or newer `--to` is exit 2 naming the shipped releases (docs/reference-project.md#template-versions)."""
    before = tree(shop)
    assert (shop / "internal/bootstrap/version.go").is_file() and not (shop / CHANGING_NEW).exists()
    code, doc, err = fw("project", "upgrade", "--check", cwd=shop)
    assert code == 0, err
    assert (doc["from_version"], doc["to_version"], doc["check"]) == (OLD, "0.1.0", True)
    assert {f["path"]: f["status"] for f in doc["files"]} == CHANGING
    assert doc["summary"] == {"changed": 2, "new": 2, "removed": 1, "skipped-scaffold-once": 1}
    assert doc["playbooks"] == PLAYBOOKS
    code, text, err = fw_text("project", "upgrade", "--check", BOOT, cwd=shop)
    assert code == 0, err
    assert text.startswith(f"--- a/{BOOT}\n+++ b/{BOOT}\n")
    assert "-\tshutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)" in text
    assert "+\t\tReadHeaderTimeout: 10 * time.Second," in text
    code, doc, err = fw("project", "upgrade", "--dry-run", "--all", cwd=shop)
    assert code == 0 and doc["summary"]["unchanged"] > 5 and doc["summary"]["changed"] == 2
    code, doc, err = fw("project", "upgrade", "--to", "9.9.9", cwd=shop)
    assert code == 2 and doc["error"]["code"] == "usage" and "0.0.9, 0.1.0" in err, err
    from engine.errors import UsageError

    for bad in ("0.0.1", "latest"):  # the same refusal in-process (the command's exit and stderr: above)
        with pytest.raises(UsageError) as caught:
            _upgrade(shop, to=bad)
        refused = caught.value
        assert (refused.exit_code, refused.code) == (2, "usage") and "0.0.9, 0.1.0" in refused.hint, bad
    assert tree(shop) == before



def test_clean_upgrade_builds_vets_and_verifies(shop: Path) -> None:
    """docs/reference-project.md#project-upgrade: an upgrade with no edits rewrites the forge-space files with
    the target's templates, moves framework_version (the rest of framework.yaml, comments included, kept),
    records the upgrade in .framework/migrations.json; the project then builds, vets, passes
    `ci verify-generated`, and the next `generate` is a no-change run."""
    from engine.authoring.generate import generate

    config = shop / "framework.yaml"
    config.write_text(config.read_text().replace("framework_version: 0.0.9", "framework_version: 0.0.9  # pinned"))
    git(shop, "init", "-q")
    code, doc, err = fw("project", "upgrade", cwd=shop)
    assert code == 0, err
    assert (doc["pinned"], doc["conflicts"]) == (True, [])
    assert {f["path"]: f["status"] for f in doc["files"]} == CHANGING
    assert "framework_version: 0.1.0  # pinned\n" in config.read_text()
    assert config.read_text().startswith("# The project's configuration")
    assert not (shop / "internal/bootstrap/version.go").exists() and (shop / CHANGING_NEW).is_file()
    assert "ReadHeaderTimeout: 10 * time.Second" in (shop / BOOT).read_text()
    assert "actions/checkout@v3" in (shop / CI).read_text()  # scaffold-once: not named, not written
    record = json.loads((shop / ".framework/migrations.json").read_text())
    assert [(u["from"], u["to"], u["conflicts"]) for u in record["upgrades"]] == [(OLD, "0.1.0", [])]
    assert generate(Project(shop)).up_to_date
    for args in (("build", "./..."), ("vet", "./...")):
        proc = go(*args, cwd=shop)
        assert proc.returncode == 0, proc.stderr
    git(shop, "add", "-A")
    git(shop, "commit", "-qm", "upgraded")
    code, doc, err = fw("ci", "verify-generated", cwd=shop)
    assert code == 0 and doc["findings"] == [], (doc, err)
    code, doc, err = fw("project", "upgrade", "--check", cwd=shop)  # at the target: nothing left to do
    assert code == 0 and doc["files"] == [] and doc["from_version"] == "0.1.0"


def test_edit_outside_the_template_change_merges_cleanly(shop: Path) -> None:
    """docs/reference-project.md#merge-rules: a hand edit of a generated file that does not overlap the
    template change is merged three ways (base = the old release's render): the edit and the new template
    change are both in the file, no conflict markers; the file still shows as edited (marker mismatch)."""
    boot = shop / BOOT
    boot.write_text(boot.read_text().replace("// DefaultPort is the listen port",
                                             "// DefaultPort (our note) is the listen port"))
    result = _upgrade(shop)
    assert {f.path: f.status for f in result.files}[BOOT] == "merged" and result.conflicts == []
    text = boot.read_text()
    assert "// DefaultPort (our note) is the listen port" in text
    assert "ReadHeaderTimeout: 10 * time.Second" in text and "10*time.Second)" in text
    assert "<<<<<<<" not in text and "=======" not in text
    assert markers.check(BOOT, text) == "mismatch"
    assert result.pinned


def test_overlapping_edit_conflicts_with_markers(shop: Path) -> None:
    """docs/reference-project.md#merge-rules: an edit on the lines the template changed is a conflict:
    standard conflict markers in the file, the path listed, exit 3 (never a silent overwrite); the pin
    moves and the conflict is recorded with the upgrade in .framework/migrations.json."""
    boot = shop / BOOT
    edited = boot.read_text().replace("context.Background(), 5*time.Second)", "context.Background(), 7*time.Second)")
    boot.write_text(edited)
    code, doc, err = fw("project", "upgrade", cwd=shop)
    assert code == 3, (doc, err)
    assert doc["conflicts"] == [BOOT] and doc["error"]["code"] == "upgrade_conflict" and BOOT in doc["error"]["message"]
    text = boot.read_text()
    assert f"<<<<<<< {BOOT}\n" in text and "\n=======\n" in text and "\n>>>>>>> framework 0.1.0\n" in text
    assert "7*time.Second" in text and "10*time.Second" in text
    assert "framework_version: 0.1.0" in (shop / "framework.yaml").read_text()
    record = json.loads((shop / ".framework/migrations.json").read_text())
    assert record["upgrades"][0]["conflicts"] == [BOOT]


def test_disowned_untouched_scaffold_once_only_with_force(shop: Path) -> None:
    """docs/reference-project.md#project-upgrade: a disowned file is never written (listed as skipped-disowned,
    `--force` on it refused, exit 1); a scaffold-once file is skipped unless named with `--force`, and then
    merged: the user's own step kept beside the new release's changes."""
    code, _, err = fw("project", "disown", BOOT, "--reason", "our own server", cwd=shop)
    assert code == 0, err
    boot_before = (shop / BOOT).read_bytes()
    ci = shop / CI
    ci.write_text(ci.read_text() + "      - run: make lint\n")
    check = _upgrade(shop, check=True)
    assert {f.path: f.status for f in check.files}[BOOT] == "skipped-disowned"
    assert {f.path: f.status for f in check.files}[CI] == "skipped-scaffold-once"
    code, doc, err = fw("project", "upgrade", "--force", BOOT, cwd=shop)
    assert code == 1 and "disowned" in doc["error"]["message"]
    result = _upgrade(shop, force=[CI])
    statuses = {f.path: f.status for f in result.files}
    assert statuses[CI] == "merged" and statuses[BOOT] == "skipped-disowned"
    assert (shop / BOOT).read_bytes() == boot_before
    text = ci.read_text()
    assert "make lint" in text and "go vet ./..." in text and "actions/checkout@v4" in text


def test_upgrade_list_and_apply_round_trip(shop: Path) -> None:
    """docs/reference-project.md#project-upgrade-list: `upgrade list` shows the pending playbooks of the
    pinned -> target releases; `upgrade apply <id>` records one in .framework/migrations.json (again: said so,
    exit 0; unknown id: exit 1); after the upgrade the rest stay pending until applied."""
    code, doc, err = fw("project", "upgrade", "list", cwd=shop)
    assert code == 0, err
    assert [p["id"] for p in doc["pending"]] == PLAYBOOKS
    assert all(p["steps"] and p["title"] and p["version"] == "0.1.0" for p in doc["pending"])
    code, doc, err = fw("project", "upgrade", "apply", "0.1.0-ci-vet", cwd=shop)
    assert (code, doc["already"]) == (0, False), err
    code, text, err = fw_text("project", "upgrade", "apply", "0.1.0-ci-vet", cwd=shop)
    assert code == 0 and "already applied" in text
    code, doc, err = fw("project", "upgrade", "apply", "0.1.0-nope", cwd=shop)
    assert code == 1 and doc["error"]["code"] == "invalid_input"
    record = json.loads((shop / ".framework/migrations.json").read_text())
    assert [(a["id"], a["version"]) for a in record["applied"]] == [("0.1.0-ci-vet", "0.1.0")]
    assert record["upgrades"] == []
    _upgrade(shop)
    from engine.upgrade.playbooks import list_pending

    listed = list_pending(Project(shop))
    assert [p.id for p in listed.pending] == [p for p in PLAYBOOKS if p != "0.1.0-ci-vet"]
    assert listed.applied == ["0.1.0-ci-vet"] and listed.from_version == OLD


def test_a_failed_upgrade_leaves_the_checkout_as_it_was(shop: Path) -> None:
    """docs/reference-project.md#project-upgrade: writes happen in a throwaway copy and are carried over only
    at the end: an upgrade that fails after writing files there (a framework.yaml whose pin is not on a line
    of its own: exit 1, `invalid_config`) leaves every file of the checkout as it was."""
    import yaml

    config = shop / "framework.yaml"
    config.write_text(json.dumps(yaml.safe_load(config.read_text())) + "\n")  # JSON is YAML: one line
    before = tree(shop)
    code, doc, err = fw("project", "upgrade", cwd=shop)
    assert code == 1 and doc["error"]["code"] == "invalid_config" and "own line" in err, (doc, err)
    assert tree(shop) == before
