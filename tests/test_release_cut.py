"""Releases: `env build --release` cuts, immutability, provenance, auto names, the file store
(docs/reference-deploy.md#commands)."""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from deploy_fixtures import demo_fixture, git  # noqa: E402,F401


def release_doc(demo, version: str) -> dict:
    return json.loads((demo.root / ".framework" / "releases" / f"{version}.json").read_text())


def test_cut_records_artifacts_digests_and_git_provenance(demo):
    """A release records per-artifact coordinate and digest, and provenance (tree, commit, branch, dirty)."""
    code, doc = demo.json("env", "build", "dev", "--release", "v1.0.0")
    assert code == 0 and doc["release_created"] and doc["pushed"]
    rel = release_doc(demo, "v1.0.0")
    coords = {a["coordinate"] for a in rel["artifacts"]}
    assert coords == {"services/api/main.py", "services/web/main.py"}
    for a in rel["artifacts"]:
        assert a["kind"] == "file"
        assert (
            a["digest"] == "sha256:" + hashlib.sha256((demo.root / a["coordinate"]).read_bytes()).hexdigest()
        )
    prov = rel["provenance"]
    assert prov["commit"] == git(demo.root, "rev-parse", "HEAD")
    assert prov["branch"] == "main" and prov["dirty"] is False
    assert prov["tree"] == git(demo.root, "rev-parse", "HEAD^{tree}")


def test_dirty_checkout_is_recorded_dirty_with_its_own_tree(demo):
    """Provenance: a dirty checkout is flagged dirty and its tree is that of the files on disk."""
    demo.edit_api("uncommitted")
    demo.run("env", "build", "dev", "--release", "v1", check=True)
    prov = release_doc(demo, "v1")["provenance"]
    assert prov["dirty"] is True and prov["tree"] != git(demo.root, "rev-parse", "HEAD^{tree}")


def test_recut_same_artifacts_is_noop_and_different_is_refused(demo):
    """Re-cutting the same version over the same artifacts is a no-op; over different ones refused."""
    demo.run("env", "build", "dev", "--release", "v1", check=True)
    before = (demo.root / ".framework" / "releases" / "v1.json").read_bytes()
    code, doc = demo.json("env", "build", "dev", "--release", "v1")
    assert code == 0 and doc["release_created"] is False
    assert (demo.root / ".framework" / "releases" / "v1.json").read_bytes() == before
    demo.edit_api("different")
    code, doc = demo.json("env", "build", "dev", "--release", "v1")
    assert code == 1 and doc["error"]["code"] == "release_conflict"
    assert (demo.root / ".framework" / "releases" / "v1.json").read_bytes() == before


def test_missing_declared_artifact_fails_the_cut(demo):
    """A cut fails if any declared artifact is missing."""
    dev = demo.root / "deploy" / "kcl" / "dev" / "main.k"
    dev.write_text(
        dev.read_text().replace(
            'command = "python3 -m py_compile services/api/main.py"}',
            'command = "true", artifacts = ["dist/api.bin"]}',
        )
    )
    code, doc = demo.json("env", "build", "dev", "--release", "v1")
    assert (
        code == 1 and doc["error"]["code"] == "artifact_missing" and "dist/api.bin" in doc["error"]["message"]
    )
    assert not (demo.root / ".framework" / "releases" / "v1.json").exists()
    code, plan = demo.json("env", "build", "dev", "--release", "v1", "--plan")
    assert code == 1 and plan["plan"]["missing"] == ["api: dist/api.bin"]


def test_release_implies_push_and_conflicting_tag_is_refused(demo):
    """--release implies --push; a conflicting --tag is refused; a matching one is accepted."""
    code, doc = demo.json("env", "build", "dev", "--release", "v1", "--tag", "other")
    assert code == 1 and doc["error"]["code"] == "invalid_input"
    code, doc = demo.json("env", "build", "dev", "--release", "v1", "--tag", "v1")
    assert code == 0 and doc["pushed"] is True


def test_no_build_harvests_digests_of_an_earlier_push(demo):
    """--no-build with --release harvests the digests recorded by an earlier push (not the checkout)."""
    code, doc = demo.json("env", "build", "dev", "--release", "v1", "--no-build")
    assert code == 1 and doc["error"]["code"] == "no_push"
    demo.run("env", "build", "dev", "--push", check=True)
    pushed_api = hashlib.sha256((demo.root / "services/api/main.py").read_bytes()).hexdigest()
    demo.edit_api("after push")  # the harvest must ignore the working tree
    code, doc = demo.json("env", "build", "dev", "--release", "v1", "--no-build")
    assert code == 0, doc
    arts = {a["coordinate"]: a["digest"] for a in release_doc(demo, "v1")["artifacts"]}
    assert arts["services/api/main.py"] == f"sha256:{pushed_api}"
    assert doc["builds"] == []


def test_plan_preflights_a_cut_and_writes_nothing(demo):
    """--plan preflights a cut: reports builds, artifacts and conflicts, writes nothing."""
    code, doc = demo.json("env", "build", "dev", "--release", "v1", "--plan")
    assert code == 0 and doc["plan"]["exists"] is False and len(doc["plan"]["artifacts"]) == 2
    assert not (demo.root / ".framework").exists()
    demo.run("env", "build", "dev", "--release", "v1", check=True)
    demo.edit_api("changed")
    code, doc = demo.json("env", "build", "dev", "--release", "v1", "--plan")
    assert code == 1 and doc["plan"]["conflict"] is True


def test_auto_name_format_and_reuse_when_tree_matches(demo):
    """Auto names are <YYYYMMDD>.<HHMMSS>-<tree12>, reused when the tree matches the checkout."""
    code, first = demo.json("env", "deploy", "dev", "--plan-only")
    version = first["target"]["release"]
    tree = git(demo.root, "rev-parse", "HEAD^{tree}")
    assert re.fullmatch(rf"\d{{8}}\.\d{{6}}-{tree[:12]}", version)
    code, again = demo.json("env", "deploy", "dev", "--plan-only")
    assert again["target"]["release"] == version and again["release_created"] is False
    demo.edit_api("new")
    code, third = demo.json("env", "deploy", "dev", "--plan-only")
    assert third["target"]["release"] != version


def test_file_store_keeps_bytes_for_exact_redeploy(demo):
    """`file` artifacts go into a content-addressed store on this machine, byte for byte."""
    demo.run("env", "build", "dev", "--release", "v1", check=True)
    original = (demo.root / "services/api/main.py").read_bytes()
    store = Path(demo.env["FRAMEWORK_LEDGER_HOME"]) / "cas" / "sha256"
    digest = hashlib.sha256(original).hexdigest()
    assert (store / digest[:2] / digest).read_bytes() == original


def test_invalid_version_names_are_refused(demo):
    """Release names must be safe file names (no path traversal into .framework/releases)."""
    code, doc = demo.json("env", "build", "dev", "--release", "../evil")
    assert code == 1 and doc["error"]["code"] == "invalid_input"
