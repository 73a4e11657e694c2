"""`framework project migrate tdd` (docs/reference-project.md#project-migrate-tdd) on a project made by `project new`
plus a second service: hand-rolled handler tests of three styles (tests/data/tdd/), an unparsable file and one the
harness cannot serve. One project per module: the runs (a dry run, a --path run, the full run, a second run) happen
once in the fixture, in that order, each recorded with the tree after it; the tests read the records."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.authoring_fixtures import _GO_ENV, tree
from tests.conftest import REPO, run_cli
from tests.lint_fixtures import LINT_TOOLS

DATA = REPO / "tests" / "data" / "tdd"
ORDER = "internal/handlers/order"
BILLING = "internal/handlers/billing"
SAMPLES = {f"{ORDER}/order_direct_test.go", f"{ORDER}/order_server_test.go", f"{BILLING}/billing_server_test.go"}
BROKEN = f"{ORDER}/order_broken_test.go"
INTERCEPTOR = f"{ORDER}/order_interceptor_test.go"
pytestmark = pytest.mark.skipif(not shutil.which("go"), reason="needs the Go toolchain")


@dataclass
class Runs:
    root: Path
    originals: dict[str, str]
    docs: dict[str, tuple[int, dict]] = field(default_factory=dict)
    trees: dict[str, dict[str, str]] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)  # the samples after the full run
    go_test: dict[str, str] = field(default_factory=dict)  # test name -> pass/fail (go test -json)
    go_vet: tuple[int, str] = (0, "")
    lint_cache: Path | None = None  # the lint cache of the fixture's runs (shared by the in-process test)


@pytest.fixture(scope="module")
def runs(authored: Path, tmp_path_factory: pytest.TempPathFactory) -> Runs:
    """A copy of the session's `project new shop --mod example.com/shop --service order`, plus `scaffold service
    billing`; the rewriter built once per machine (named by the hash of its sources, like the lint tools), Go's
    builds with -trimpath (the unchanged packages come from the machine's build cache)."""
    base = tmp_path_factory.mktemp("tdd")
    home = base / "home"
    env = {**_GO_ENV, **LINT_TOOLS, "GOFLAGS": "-buildvcs=false -trimpath", "HOME": str(home),
           "XDG_CACHE_HOME": str(home / ".cache"), "XDG_CONFIG_HOME": str(home / ".config"),
           "FRAMEWORK_LINT_CACHE": str(base / "lint-cache")}

    def fw(*args: str, cwd: Path) -> tuple[int, dict]:
        result = run_cli("framework", *args, "--json", cwd=cwd, env=env, timeout=300)
        return result.exit_code, json.loads(result.stdout) if result.stdout.strip() else {"stderr": result.stderr}

    root = Path(shutil.copytree(authored, base / "shop", symlinks=True))
    code, doc = fw("scaffold", "service", "billing", cwd=root)
    assert code == 0, doc
    for svc in ("order", "billing"):  # Ping echoes, so the samples' assertions have something to check
        stub = root / f"internal/handlers/{svc}/rpc_ping.go"
        stub.write_text(stub.read_text().replace(f"connect.NewResponse(&{svc}v1.PingResponse{{}})",
                                                 f"connect.NewResponse(&{svc}v1.PingResponse{{Message: "
                                                 "req.Msg.GetMessage()})"))
    originals = {}
    for sample in sorted(DATA.glob("*.go.txt")):
        name = sample.name.removesuffix(".txt")
        rel = f"internal/handlers/{name.split('_')[0]}/{name}"
        originals[rel] = sample.read_text()
        (root / rel).write_text(originals[rel])
    out = Runs(root=root, originals=originals, lint_cache=base / "lint-cache")
    out.trees["before"] = tree(root)
    for name, args in (("dry", ["--dry-run"]), ("path", ["--path", BILLING]), ("full", []), ("second", [])):
        out.docs[name] = fw("project", "migrate", "tdd", *args, cwd=root)
        out.trees[name] = tree(root)
    out.texts = {rel: (root / rel).read_text() for rel in originals}
    (root / BROKEN).unlink()  # the unparsable file is the user's to fix; the rest must build and pass
    import subprocess

    go_env = {**os.environ, **env}
    vet = subprocess.run(["go", "vet", "./..."], cwd=root, capture_output=True, text=True, env=go_env, timeout=600)
    out.go_vet = (vet.returncode, vet.stderr)
    test = subprocess.run(["go", "test", "-count=1", "-json", "./..."], cwd=root,
                          capture_output=True, text=True, env=go_env, timeout=600)
    for line in test.stdout.splitlines():
        event = json.loads(line) if line.startswith("{") else {}
        if event.get("Test") and event.get("Action") in ("pass", "fail"):
            out.go_test[event["Test"]] = event["Action"]
    return out


def _files(doc: dict) -> dict[str, dict]:
    return {f["path"]: f for f in doc["files"]}


def test_dry_run_prints_each_diff_and_writes_nothing(runs: Runs) -> None:
    """docs/reference-project.md#how-it-runs: --dry-run prints the unified diff of each file it would rewrite and
    writes nothing (the checkout is byte for byte as before)."""
    code, doc = runs.docs["dry"]
    assert runs.trees["dry"] == runs.trees["before"]
    assert doc["dry_run"] is True and doc["written"] == []
    assert set(doc["rewritten"]) == SAMPLES
    files = _files(doc)
    direct = files[f"{ORDER}/order_direct_test.go"]["diff"]
    assert f"--- a/{ORDER}/order_direct_test.go" in direct
    assert "-\th := &Handler{}\n" in direct and "+\th := NewHarness(t)\n" in direct
    assert code == 1 and doc["error"]["code"] == "files_left_alone"  # the two files it cannot rewrite


def test_path_limits_the_run_to_its_directory(runs: Runs) -> None:
    """docs/reference-project.md#how-it-runs: --path limits the run to a directory: only the billing service's test
    changed, the order service's files are as they were."""
    code, doc = runs.docs["path"]
    assert code == 0, doc
    assert [f["path"] for f in doc["files"]] == [f"{BILLING}/billing_server_test.go"]
    changed = {p for p in runs.trees["path"] if runs.trees["path"][p] != runs.trees["before"].get(p)}
    assert changed == {f"{BILLING}/billing_server_test.go"}


def test_rewritten_tests_use_the_harness_and_keep_comments_and_assertions(runs: Runs) -> None:
    """docs/reference-project.md#what-a-hand-rolled-handler-test-is: each style becomes the harness (NewHarness,
    NewHarnessFor, h.Client, srv.Server); every comment and every assertion of the original stays."""
    code, doc = runs.docs["full"]
    assert set(doc["written"]) == {f"{ORDER}/order_direct_test.go", f"{ORDER}/order_server_test.go"}
    direct = runs.texts[f"{ORDER}/order_direct_test.go"]
    assert "h := NewHarness(t)" in direct and "h.Client.Ping(" in direct
    assert "NewHarness(t).Client.GetOrder(" in direct and "(&Handler{})" not in direct
    assert "h := NewHarness(t) // the zero Handler is ready to serve" in direct  # the subtest's own t
    served = runs.texts[f"{ORDER}/order_server_test.go"]
    assert "server := NewHarnessFor(t, handler)" in served and "client := server.Client" in served
    assert "server.Server.URL" in served and "httptest" not in served and "t.Cleanup(server.Close)" not in served
    billing = runs.texts[f"{BILLING}/billing_server_test.go"]
    assert "srv := NewHarness(t)" in billing and "srv.Server.Client().Get(srv.Server.URL" in billing
    assert '"net/http/httptest"' not in billing and "billingv1connect" not in billing
    for rel in SAMPLES:
        before, after = runs.originals[rel], runs.texts[rel]
        for line in before.splitlines():
            text = line.strip()
            if text.startswith("//"):
                assert text in after, f"{rel}: comment {text!r} lost"
            if "//" in text:
                assert text[text.index("//"):] in after, f"{rel}: comment of {text!r} lost"
            if text.startswith(("t.Fatal", "t.Errorf", "if got", "if res.", "if resp.", "if err")):
                assert text in after, f"{rel}: assertion {text!r} lost"


def test_unsafe_files_are_reported_with_their_reason_and_left_alone(runs: Runs) -> None:
    """docs/reference-project.md#files-left-alone: an unparsable file and one whose server has interceptors are
    listed as skipped with the reason and line, byte for byte untouched; the run exits 1."""
    code, doc = runs.docs["full"]
    assert code == 1 and doc["ok"] is False and doc["error"]["code"] == "files_left_alone"
    files = _files(doc)
    assert doc["skipped"] == [BROKEN, INTERCEPTOR]
    assert files[BROKEN]["reason"].startswith("does not parse") and files[BROKEN]["line"] == 5
    assert str(runs.root) not in files[BROKEN]["reason"]
    assert "interceptors" in files[INTERCEPTOR]["reason"]
    for rel in (BROKEN, INTERCEPTOR):
        assert runs.texts[rel] == runs.originals[rel]


def test_second_run_changes_nothing(runs: Runs) -> None:
    """docs/reference-project.md#how-it-runs: a second run reports every file unchanged (or still left alone) and
    writes nothing."""
    _, doc = runs.docs["second"]
    assert doc["rewritten"] == [] and doc["written"] == []
    assert {f["path"]: f["status"] for f in doc["files"]} == {
        **dict.fromkeys(SAMPLES, "unchanged"), BROKEN: "skipped", INTERCEPTOR: "skipped"}
    assert runs.trees["second"] == runs.trees["full"]


def test_migrated_tests_pass_with_the_real_go_test(runs: Runs) -> None:
    """docs/reference-project.md#the-harness: the project with its generated harness and the migrated tests vets
    and passes `go test` (every sample's test and subtest, the generated test and the one left alone)."""
    assert runs.go_vet[0] == 0, runs.go_vet[1]
    expected = {"TestPingEchoes", "TestGetOrderInline", "TestPingTable", "TestPingTable/empty", "TestPingTable/word",
                "TestCreateThenGetOverTheWire", "TestPingOverHTTP", "TestPingThroughAnInterceptor",
                "TestEveryUnaryRPCHasAHandler"}
    assert expected <= set(runs.go_test), runs.go_test
    assert {name for name, action in runs.go_test.items() if action != "pass"} == set()


def test_bad_path_is_a_usage_error(runs: Runs, tmp_path: Path) -> None:
    """docs/reference-project.md#how-it-runs: a --path that does not exist, or names a generated test, is exit 2 with
    a clear message and no traceback; nothing is written."""
    env = {**_GO_ENV, **LINT_TOOLS, "FRAMEWORK_LINT_CACHE": str(tmp_path / "lint")}
    before = tree(runs.root)
    for path in ("internal/handlers/nope", f"{ORDER}/handler_test.go"):
        result = run_cli("framework", "project", "migrate", "tdd", "--path", path, "--json", cwd=runs.root, env=env)
        doc = json.loads(result.stdout)
        assert result.exit_code == 2 and doc["error"]["code"] == "usage", doc
        assert path in doc["error"]["message"] and "Traceback" not in result.stderr
    assert tree(runs.root) == before


EDGE = {  # tests/data/tdd/edge/<name>: the start of the reason it is left alone with (None: nothing to migrate)
    "both_test.go": "TestBoth: the handler is both served by the test's server and called directly",
    "ext_test.go": "package order_test is an external test package",
    "helper_test.go": "newServer: serves the handler in a way the codemod does not follow",
    "stream_test.go": "TestWatchDirect: calls a server-streaming RPC on the handler directly",
    "twomux_test.go": "TestTwo: the test's mux serves more than OrderService",
    "value_test.go": "TestValue: uses the Handler value h other than to call its RPCs",
    "ctxvalue_test.go": "TestPingAsAlice: passes context values (context.WithValue)",
    "sentinel_test.go": "TestGetMissing: compares the handler's errors with errors.Is",
    "plain_test.go": None,
}


def test_each_unsafe_construct_leaves_its_file_alone(runs: Runs, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/reference-project.md#files-left-alone: an external test package, a direct call of a streaming RPC, a
    helper serving the handler without a testing parameter, a mux serving more than the service, a Handler value
    used otherwise, a handler both served and called, a direct call given context values or whose error is compared
    with errors.Is (neither crosses the wire): each file is skipped with its reason and line; a test with no
    handler in it is unchanged (the rewriter in-process, the service's RPCs given with their stream kinds)."""
    from engine.codemods.tdd import _run_rewriter

    monkeypatch.setenv("FRAMEWORK_LINT_CACHE", str(runs.lint_cache))
    monkeypatch.setenv("FRAMEWORK_LINT_TOOLS", LINT_TOOLS["FRAMEWORK_LINT_TOOLS"])  # the fixture's rewriter
    where = tmp_path / ORDER
    where.mkdir(parents=True)
    for name in EDGE:
        (where / name).write_text((DATA / "edge" / f"{name}.txt").read_text())
    services = {ORDER: ("OrderService", {"Ping": "unary", "Watch": "server"})}
    results = {Path(r["path"]).name: r for r in _run_rewriter(tmp_path, [f"{ORDER}/{n}" for n in EDGE], services)}
    for name, reason in EDGE.items():
        if reason is None:
            assert results[name]["status"] == "unchanged", results[name]
        else:
            assert results[name]["status"] == "skipped" and results[name]["reason"].startswith(reason), results[name]
            assert results[name]["line"] > 0
            assert "content" not in results[name]
