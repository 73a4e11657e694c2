"""`ci verify-test-run`: does a `go test -json` stream prove anything? (docs/reference-ci.md#commands).

Reads the test2json events of `go test -json` (stdin or --from). Verdict:
- a failed test, a failed package or a build failure fails the command (exit 1);
- rules (exit 1): zero-evidence (a package, or the whole stream, whose tests were all skipped),
  mass-skip (skipped / tests above --max-skip-ratio), too few tests (ran below --min-tests);
  packages listed in framework.yaml `ci.test_skips.allow` (each with a reason) are exempt;
- undetermined (exit 2): no test events at all, or a stream ending mid-run (a package started
  without its final pass/fail/skip event).
Tests are counted at the leaves: a test with subtests counts as its subtests.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from fnmatch import fnmatchcase
from typing import Any

from pydantic import BaseModel

from engine.errors import ConfigError, EngineError, InvalidInput

DEFAULT_MAX_SKIP_RATIO = 0.5
DEFAULT_MIN_TESTS = 1


class TestRunUndetermined(EngineError):
    exit_code = 2
    code = "test_run_undetermined"


class SkipAllowance(BaseModel):
    package: str  # an import path, `prefix/...` (Go's pattern), or a glob
    reason: str

    def covers(self, package: str) -> bool:
        if self.package.endswith("/..."):
            base = self.package[:-4]
            return package == base or package.startswith(base + "/")
        return package == self.package or fnmatchcase(package, self.package)


class PackageResult(BaseModel):
    package: str
    status: str  # pass | fail | skip | build-fail | incomplete
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    failed_tests: list[str] = []
    skipped_tests: list[str] = []
    allowed: str | None = None  # the reason from ci.test_skips.allow
    output: list[str] = []  # build output, or the tail of a failing package's output


class Violation(BaseModel):
    rule: str  # failures | zero-evidence | mass-skip | min-tests
    message: str
    packages: list[str] = []


class TestRunReport(BaseModel):
    packages: list[PackageResult]
    totals: dict[str, int]
    skip_ratio: float
    max_skip_ratio: float
    min_tests: int
    violations: list[Violation]
    verdict: str  # passed | failed


def allowances(config: dict[str, Any]) -> list[SkipAllowance]:
    """`ci.test_skips.allow` from framework.yaml: a list of {package, reason}; a missing reason is an error."""
    ci = config.get("ci")
    if ci is None:
        return []
    skips = ci.get("test_skips") if isinstance(ci, dict) else None
    if not isinstance(ci, dict) or not isinstance(skips, (dict, type(None))):
        raise ConfigError("framework.yaml: ci.test_skips must be a mapping with `allow: [{package, reason}]`")
    allow = (skips or {}).get("allow")
    if allow is None:
        return []
    if not isinstance(allow, list):
        raise ConfigError("framework.yaml: ci.test_skips.allow must be a list of {package, reason}")
    out = []
    for i, entry in enumerate(allow):
        where = f"framework.yaml: ci.test_skips.allow[{i}]"
        if not isinstance(entry, dict) or not str(entry.get("package") or "").strip():
            raise ConfigError(f"{where}: needs `package` (an import path or `path/...`)")
        if not str(entry.get("reason") or "").strip():
            raise ConfigError(f"{where} ({entry['package']}): an allowed package needs a `reason`",
                              hint="say why its tests may be skipped, e.g. reason: needs a GPU")
        out.append(SkipAllowance(package=str(entry["package"]).strip(), reason=str(entry["reason"]).strip()))
    return out


def _events(lines: Iterable[str]) -> Iterable[dict[str, Any]]:
    for line in lines:
        line = line.strip()
        if not line.startswith("{"):
            continue  # stderr mixed in (`2>&1`), or go's own non-JSON lines
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("Action"):
            yield event


def _package_of(event: dict[str, Any]) -> str | None:
    if event.get("Package"):
        return str(event["Package"])
    path = event.get("ImportPath")  # build-output / build-fail: "pkg [pkg.test]"
    return str(path).split(" [", 1)[0] if path else None


def read_stream(lines: Iterable[str]) -> dict[str, PackageResult]:
    """Fold test2json events into one result per package (tests counted at the leaves)."""
    tests: dict[str, dict[str, str]] = {}  # package -> test -> last action
    results: dict[str, PackageResult] = {}
    build_failed: set[str] = set()
    for ev in _events(lines):
        pkg = _package_of(ev)
        if pkg is None:
            continue
        res = results.setdefault(pkg, PackageResult(package=pkg, status="incomplete"))
        action, test = ev["Action"], ev.get("Test")
        if action == "build-output":
            res.output.append(str(ev.get("Output", "")).rstrip("\n"))
        elif action == "build-fail":
            build_failed.add(pkg)
        elif action == "output" and ev.get("Output"):
            res.output = (res.output + [str(ev["Output"]).rstrip("\n")])[-20:]
        elif test and action in ("run", "pass", "fail", "skip"):
            tests.setdefault(pkg, {})[test] = action
        elif not test and action in ("pass", "fail", "skip"):
            res.status = "build-fail" if (pkg in build_failed or ev.get("FailedBuild")) else action
    for pkg, res in results.items():
        seen = tests.get(pkg, {})
        for name, action in sorted(seen.items()):
            if any(other.startswith(name + "/") for other in seen):
                continue  # a parent: its subtests are the evidence
            if action == "pass":
                res.passed += 1
            elif action == "fail" or (action == "run" and res.status != "incomplete"):
                res.failed += 1  # a test left running when its package ended died with it (a panic)
                res.failed_tests.append(name)
            elif action == "skip":
                res.skipped += 1
                res.skipped_tests.append(name)
        if res.status in ("pass", "skip") and not res.failed:
            res.output = []  # kept only where it explains a failure
    return results


def verify(lines: Iterable[str], *, allow: list[SkipAllowance], max_skip_ratio: float = DEFAULT_MAX_SKIP_RATIO,
           min_tests: int = DEFAULT_MIN_TESTS) -> tuple[TestRunReport, int]:
    if not 0 <= max_skip_ratio <= 1:
        raise InvalidInput(f"--max-skip-ratio must be between 0 and 1, not {max_skip_ratio}")
    if min_tests < 0:
        raise InvalidInput(f"--min-tests must be 0 or more, not {min_tests}")
    results = read_stream(lines)
    if not results:
        raise TestRunUndetermined("no `go test -json` events in the input: nothing can be concluded",
                                  hint="pipe `go test -json ./...` into it, or pass --from <file>")
    unfinished = sorted(p for p, r in results.items() if r.status == "incomplete")
    if unfinished:
        raise TestRunUndetermined(f"the stream ends mid-run: no final result for {', '.join(unfinished)}",
                                  hint="the test process was killed or its output cut; run the tests again")
    packages = sorted(results.values(), key=lambda r: r.package)
    for res in packages:
        res.allowed = next((a.reason for a in allow if a.covers(res.package)), None)
    violations: list[Violation] = []
    failing = [r.package for r in packages if r.status in ("fail", "build-fail") or r.failed]
    if failing:
        tests = sum(r.failed for r in packages)
        builds = sum(1 for r in packages if r.status == "build-fail")
        violations.append(Violation(rule="failures", packages=failing,
                                    message=f"{tests} failed test(s), {builds} build failure(s) in {len(failing)} "
                                            "package(s)"))
    counted = [r for r in packages if r.allowed is None]
    totals = {k: sum(getattr(r, k) for r in packages) for k in ("passed", "failed", "skipped")}
    skipped = sum(r.skipped for r in counted)
    total = sum(r.passed + r.failed + r.skipped for r in counted)
    ratio = skipped / total if total else 0.0
    all_skipped = [r.package for r in counted if r.skipped and not (r.passed or r.failed)]
    if all_skipped:
        violations.append(Violation(rule="zero-evidence", packages=all_skipped,
                                    message=f"every test skipped in {', '.join(all_skipped)}"))
    if total and ratio > max_skip_ratio:
        violations.append(Violation(rule="mass-skip", packages=[r.package for r in counted if r.skipped],
                                    message=f"{skipped} of {total} tests skipped ({ratio:.0%}), above the allowed "
                                            f"{max_skip_ratio:.0%}"))
    ran = totals["passed"] + totals["failed"]
    if ran < min_tests:
        violations.append(Violation(rule="min-tests", message=f"{ran} test(s) ran, fewer than --min-tests "
                                                              f"{min_tests}"))
    report = TestRunReport(packages=packages, totals=totals, skip_ratio=round(ratio, 4),
                           max_skip_ratio=max_skip_ratio, min_tests=min_tests, violations=violations,
                           verdict="failed" if violations else "passed")
    return report, (1 if violations else 0)


def verify_input(path: str | None, *, max_skip_ratio: float, min_tests: int) -> tuple[TestRunReport, int]:
    """The command: the stream from `path` or stdin, the allow list from the project (when there is one)."""
    import sys

    from engine.errors import ProjectNotFound
    from engine.project import find_project

    try:
        allow = allowances(find_project().config)
    except ProjectNotFound:
        allow = []  # a stream can be checked outside a project: nothing is allowed to skip
    if path is None:
        if sys.stdin.isatty():
            raise TestRunUndetermined("no stream: stdin is a terminal",
                                      hint="go test -json ./... | framework ci verify-test-run, or --from <file>")
        return verify(sys.stdin, allow=allow, max_skip_ratio=max_skip_ratio, min_tests=min_tests)
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return verify(fh, allow=allow, max_skip_ratio=max_skip_ratio, min_tests=min_tests)
    except OSError as exc:
        raise TestRunUndetermined(f"cannot read {path}: {exc.strerror}") from exc
