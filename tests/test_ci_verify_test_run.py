"""`ci verify-test-run` over real `go test -json` streams (docs/reference-ci.md#commands:
`ci.test_skips.allow`; undetermined input or a stream ending mid-run exits non-zero)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from ci_fixtures import project_fixture  # noqa: E402,F401

PKG = "example.test/m/"


def by_pkg(doc):
    return {p["package"].removeprefix(PKG): p for p in doc["packages"]}


def test_passing_stream_is_evidence(project, go_streams):
    """A stream whose tests pass exits 0; tests are counted at the leaves (TestB counts as TestB/sub)."""
    path = go_streams.write("pass", "pass", "none")
    code, doc = project.json("ci", "verify-test-run", "--from", str(path))
    assert code == 0, doc
    assert doc["totals"] == {"passed": 2, "failed": 0, "skipped": 0} and doc["verdict"] == "passed"
    assert by_pkg(doc)["none"]["status"] == "skip"  # no test files: not zero-evidence


def test_stdin_is_the_default_source(project, go_streams):
    """The stream is read from stdin by default."""
    path = go_streams.write("pass-stdin", "pass")
    proc = project.run("ci", "verify-test-run", input=path.read_text())
    assert proc.returncode == 0 and "2 passed, 0 failed, 0 skipped" in proc.stdout


def test_failures_in_the_stream_fail_the_command(project, go_streams):
    """Failures in the stream fail the command (docs/reference-ci.md#commands), naming the failed test."""
    code, doc = project.json("ci", "verify-test-run", "--from", str(go_streams.write("fail", "fail", "pass")))
    assert code == 1 and doc["error"]["code"] == "test_run_failed"
    assert by_pkg(doc)["fail"]["failed_tests"] == ["TestBad"]
    assert [v["rule"] for v in doc["violations"]] == ["failures"]


def test_a_panic_mid_run_fails_with_the_panicking_test(project, go_streams):
    """A panic mid-run: the panicking test failed, the tests after it never ran, the command fails."""
    code, doc = project.json("ci", "verify-test-run", "--from", str(go_streams.write("panic", "panic")))
    p = by_pkg(doc)["panic"]
    assert code == 1 and p["status"] == "fail" and p["failed_tests"] == ["TestPanics"] and p["passed"] == 1
    assert any("panic" in line for line in p["output"])


def test_a_build_failure_fails_and_shows_the_compiler(project, go_streams):
    """A package that does not compile is a failure (build-fail), with the compiler's message."""
    code, doc = project.json("ci", "verify-test-run", "--from", str(go_streams.write("build", "build", "pass")))
    b = by_pkg(doc)["build"]
    assert code == 1 and b["status"] == "build-fail"
    assert any("undefined" in line for line in b["output"])


def test_zero_evidence_all_skipped(project, go_streams):
    """Rule zero-evidence: every test of a package skipped fails, even when the ratio is allowed."""
    path = go_streams.write("skip", "skip", "pass", "fail")
    code, doc = project.json("ci", "verify-test-run", "--from", str(path), "--max-skip-ratio", "1")
    rules = {v["rule"]: v for v in doc["violations"]}
    assert code == 1 and rules["zero-evidence"]["packages"] == [PKG + "skip"]
    code, doc = project.json("ci", "verify-test-run", "--from", str(go_streams.write("skip-only", "skip")))
    assert code == 1 and {v["rule"] for v in doc["violations"]} >= {"zero-evidence", "min-tests"}


def test_mass_skip_ratio(project, go_streams):
    """Rule mass-skip: skipped/tests above --max-skip-ratio fails (3 of 4 here); a higher ratio passes."""
    path = go_streams.write("mixed", "mixed")
    code, doc = project.json("ci", "verify-test-run", "--from", str(path))
    assert code == 1 and [v["rule"] for v in doc["violations"]] == ["mass-skip"] and doc["skip_ratio"] == 0.75
    code, doc = project.json("ci", "verify-test-run", "--from", str(path), "--max-skip-ratio", "0.8")
    assert code == 0


def test_min_tests(project, go_streams):
    """--min-tests: fewer tests ran than required fails."""
    path = go_streams.write("pass-min", "pass")
    code, doc = project.json("ci", "verify-test-run", "--from", str(path), "--min-tests", "3")
    assert code == 1 and [v["rule"] for v in doc["violations"]] == ["min-tests"]
    assert project.json("ci", "verify-test-run", "--from", str(path), "--min-tests", "2")[0] == 0


def test_allowed_packages_with_a_reason_are_exempt(project, go_streams):
    """ci.test_skips.allow: an allowed package (exact or path/...) may skip, the reason is reported."""
    path = go_streams.write("skip-mixed", "skip", "mixed")
    assert project.json("ci", "verify-test-run", "--from", str(path))[0] == 1
    project.config("ci:\n  test_skips:\n    allow:\n"
                   f"      - package: {PKG}skip\n        reason: needs docker, run nightly\n"
                   "      - package: example.test/m/mix...\n        reason: not a Go pattern (no /...)\n")
    code, doc = project.json("ci", "verify-test-run", "--from", str(path))
    assert code == 1 and [v["rule"] for v in doc["violations"]] == ["mass-skip"]  # mixed is not covered
    assert by_pkg(doc)["skip"]["allowed"] == "needs docker, run nightly"
    project.config("ci:\n  test_skips:\n    allow:\n"
                   f"      - package: {PKG}skip\n        reason: needs docker\n"
                   "      - package: example.test/...\n        reason: the whole module may skip\n")
    code, doc = project.json("ci", "verify-test-run", "--from", str(path))
    assert code == 0 and by_pkg(doc)["mixed"]["allowed"] == "the whole module may skip"


def test_allow_entry_without_a_reason_is_a_configuration_error(project, go_streams):
    """An allow entry without a reason is a configuration error (named), as is a malformed list."""
    path = go_streams.write("cfg", "pass")
    project.config(f"ci:\n  test_skips:\n    allow:\n      - package: {PKG}skip\n")
    code, doc = project.json("ci", "verify-test-run", "--from", str(path))
    assert code == 1 and doc["error"]["code"] == "invalid_config"
    assert "ci.test_skips.allow[0]" in doc["error"]["message"] and "reason" in doc["error"]["message"]
    project.config("ci:\n  test_skips:\n    allow: skip\n")
    code, doc = project.json("ci", "verify-test-run", "--from", str(path))
    assert code == 1 and doc["error"]["code"] == "invalid_config"


def test_stream_ending_mid_run_is_undetermined(project, go_streams):
    """Undetermined input (docs/reference-ci.md#commands): a stream that ends mid-run (cut before the
    package's result) exits non-zero (2)."""
    path = go_streams.write("cut", "pass", cut=1)
    code, doc = project.json("ci", "verify-test-run", "--from", str(path))
    assert code == 2 and doc["error"]["code"] == "test_run_undetermined"
    assert PKG + "pass" in doc["error"]["message"]


def test_undetermined_input(project, go_streams):
    """Undetermined input (docs/reference-ci.md#commands): input with no test events (go test -v text,
    empty, a missing file) exits non-zero (2)."""
    for text in (go_streams.verbose_text, ""):
        proc = project.run("ci", "verify-test-run", "--json", input=text)
        assert proc.returncode == 2, proc.stdout
    code, doc = project.json("ci", "verify-test-run", "--from", str(go_streams.dir / "missing.json"))
    assert code == 2 and "missing.json" in doc["error"]["message"]
    code, _ = project.json("ci", "verify-test-run", "--from", str(go_streams.write("x", "pass")),
                           "--max-skip-ratio", "2")
    assert code == 1
