"""Shared fixtures: isolated per-user state, a copy of the demo project, real CLI processes; the
expensive fixtures built once per pytest process (a worker, under `make test`'s pytest-xdist): the
PostgreSQL server, the Go test streams, the generated project, the Kubernetes control plane."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # the tests' shared fixture modules
import cli_fork  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def _python_without_shim() -> None:
    """`python3` / `python` on PATH as the interpreter itself, when PATH finds a script in front of it (pyenv's
    shims: a bash script and `pyenv exec`, ~0.14 CPU-s and ~30 processes before Python starts; the suite's
    demo workloads run `python3 ...` some 450 times). A directory with the two links goes first on this
    process's PATH, which every child inherits; the interpreter is the one the tests run on."""
    import atexit
    import tempfile

    found = shutil.which("python3")
    if found is None:
        return
    with open(found, "rb") as fh:
        if fh.read(4) == b"\x7fELF":
            return
    target = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    where = tempfile.mkdtemp(prefix="suite-python-")
    atexit.register(shutil.rmtree, where, True)
    for name in ("python3", "python"):
        os.symlink(target, os.path.join(where, name))
    os.environ["PATH"] = f"{where}{os.pathsep}{os.environ.get('PATH', '')}"


_python_without_shim()


def read_terminal(leader: int) -> bytes:
    """Everything a child wrote to its pty, read while it runs (a full pty buffer would block it) until
    it closes the terminal (EOF, or EIO on Linux); the leader end is closed."""
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    return b"".join(chunks)
DEMO = REPO / "examples" / "demo"
BIN = Path(sys.executable).parent


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test gets its own HOME, caches, config and ledger: nothing touches the real user's."""
    home = tmp_path_factory.mktemp("home")
    for name, value in {
        "HOME": home,
        "XDG_CACHE_HOME": home / ".cache",
        "XDG_CONFIG_HOME": home / ".config",
        "FRAMEWORK_LEDGER_HOME": home / ".framework" / "ledger",
    }.items():
        monkeypatch.setenv(name, str(value))
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FRAMEWORK_UI_CONFIG", raising=False)
    yield home


@pytest.fixture
def demo_project(tmp_path: Path) -> Path:
    """A private copy of examples/demo (tests may edit it)."""
    target = tmp_path / "demo"
    shutil.copytree(DEMO, target, ignore=shutil.ignore_patterns(".framework", "__pycache__"))
    from deploy_fixtures import dev_database_off

    dev_database_off(target)
    return target


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str


def run_cli(program: str, *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120) -> Result:
    """Run the installed console script as a real child process (no terminal)."""
    proc = cli_fork.run([str(BIN / program), *args], cwd=cwd, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})}, timeout=timeout,
                          check=False)
    return Result(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def cli() -> object:
    return run_cli


# Session-scoped fixtures are defined here, once: imported into each test module instead, every module
# would get a server of its own, each kept until the run ends.
from authoring_fixtures import authored  # noqa: E402,F401
from ci_fixtures import go_streams_fixture  # noqa: E402,F401
from k8s_fixtures import k8s_fixture, stop_shared  # noqa: E402,F401
from pg_fixtures import pg_server  # noqa: E402,F401


# The Kubernetes modules run one after another: as one unit in the collection, and as one scheduling
# unit under pytest-xdist's --dist loadfile (pytest_xdist_make_scheduler below), so the worker that runs
# them starts one control plane and stops it as soon as its last user is done.
def _k8s_module(nodeid: str) -> bool:
    return "k8s" in Path(nodeid.split("::", 1)[0]).name


# Files whose tests share no module fixture and are long one by one: each test is its own unit, so the
# workers share them out (the bench smoke runs are a fifth of the suite's wall time in one file).
_SPLIT = ("test_bench_smoke.py",)


def _unit(nodeid: str) -> str:
    if _k8s_module(nodeid):
        return "k8s modules"
    path = nodeid.split("::", 1)[0]
    return nodeid if Path(path).name in _SPLIT else path


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Units (a file, or all the k8s modules) longest first, by tests/durations.json (seconds per
    file, from a whole run: `python tests/suite_durations.py <junit.xml>`): the workers take units in
    this order, so the long ones start at once and the short ones fill the end (the whole run ends
    when its last unit does). A file not in the table weighs one second a test."""
    from suite_durations import weights

    known = weights()
    units: dict[str, list[pytest.Item]] = {}
    for item in items:
        units.setdefault(_unit(item.nodeid), []).append(item)
    in_file: dict[str, int] = {}
    for item in items:
        in_file[item.nodeid.split("::", 1)[0]] = in_file.get(item.nodeid.split("::", 1)[0], 0) + 1
    cost: dict[str, float] = {}
    for name, members in units.items():  # a file's seconds shared by its tests
        paths = [item.nodeid.split("::", 1)[0] for item in members]
        cost[name] = sum(known.get(path, float(in_file[path])) / in_file[path] for path in paths)
    order = sorted(units, key=lambda name: -cost[name])
    items[:] = [item for name in order for item in units[name]]


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    if nextitem is None or not _k8s_module(nextitem.nodeid):
        stop_shared()


# The test process's cyclic collector runs far less often: the in-process dashboard tests allocate
# millions of short-lived objects, and with the default thresholds (700, 10, 10) collections took
# ~19% of a worker's CPU (tests/test_dashboard.py: 2.95 of 15.4 CPU-s; 0.87 with these). Only the
# test process: the commands it starts keep Python's defaults.
GC_THRESHOLDS = (10_000, 50, 100)


def pytest_configure(config: pytest.Config) -> None:
    import gc

    gc.set_threshold(*GC_THRESHOLDS)
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistScheduling(), "suite-scheduling")


class _XdistScheduling:
    @pytest.hookimpl
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: object) -> object | None:
        """--dist loadfile, the k8s modules one unit (the rest: one unit per file, as loadfile)."""
        if config.getvalue("dist") != "loadfile":
            return None
        from xdist.scheduler import LoadFileScheduling

        class Scheduling(LoadFileScheduling):  # type: ignore[misc]
            def _split_scope(self, nodeid: str) -> str:
                return _unit(nodeid)

            def schedule(self) -> None:
                self.config.option.loadscopereorder = False  # keep the collection's longest-first order
                super().schedule()

        return Scheduling(config, log)


# SUITE_CPU_OUT=<dir>: each pytest process writes the CPU seconds (its own, its reaped children's and the
# CLI calls tests/cli_fork.py's server forked for it; user + system) each test file costs, setup and
# teardown included, to <dir>/<worker>.json (and each test's, with its wall start and end, to
# <dir>/<worker>.tests.json; the forked CLI calls by command, to <dir>/<worker>.cli.json) — where a
# whole run's CPU goes, whatever else the machine is doing (wall times under load say little).
_cpu: dict[str, float] = {}
_tests: list[tuple[str, float, float, float]] = []


def _cpu_now() -> float:
    import resource

    from cli_fork import CPU

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime + CPU[0]  # + the forked CLI calls


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    if not os.environ.get("SUITE_CPU_OUT"):
        yield
        return
    import time

    start, began = _cpu_now(), time.time()
    yield
    path = item.nodeid.split("::", 1)[0]
    spent = _cpu_now() - start
    _cpu[path] = _cpu.get(path, 0.0) + spent
    _tests.append((item.nodeid, round(began, 3), round(time.time(), 3), round(spent, 3)))
    if nextitem is None or nextitem.nodeid.split("::", 1)[0] != path:  # a file done: the table so far
        import json

        out = Path(os.environ["SUITE_CPU_OUT"])
        out.mkdir(parents=True, exist_ok=True)
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        (out / f"{worker}.json").write_text(json.dumps(_cpu, indent=0, sort_keys=True))
        # and each test's (node id, wall start, wall end, CPU): the worker's timeline (idle cores, the tail)
        (out / f"{worker}.tests.json").write_text(json.dumps(_tests, indent=0))
        from cli_fork import CALLS  # and the forked CLI calls by command: [calls, CPU seconds]

        (out / f"{worker}.cli.json").write_text(json.dumps(CALLS, indent=0, sort_keys=True))


@pytest.fixture(autouse=True)
def _sigint_as_python_starts() -> Iterator[None]:
    """Each test starts with Ctrl-C as a Python process has it (the default handler, not blocked): the
    children a test interrupts inherit an ignored or blocked SIGINT from their parent, and a test that
    sends SIGINT to its child must not hang because an earlier test in the same worker changed it."""
    import signal

    def reset() -> list[str]:
        changed = []
        if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
            changed.append(f"handler {signal.getsignal(signal.SIGINT)!r}")
            signal.signal(signal.SIGINT, signal.default_int_handler)
        if signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, []):
            changed.append("blocked")
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        return changed

    reset()
    yield
    left = reset()
    if left:
        sys.stderr.write(f"\nSIGINT left changed ({', '.join(left)}) by a test; restored\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failed snapshot test shows its changed screen lines in the report (tests/snapshot_diff.py)."""
    outcome = yield
    report = outcome.get_result()
    if call.when == "call" and report.failed and "snap_compare" in getattr(item, "fixturenames", ()):
        from snapshot_diff import report_section

        section = report_section(item)
        if section:
            report.sections.append(("snapshot text diff", section))


@pytest.fixture
def snap_compare(snap_compare):  # type: ignore[no-untyped-def]
    """pytest-textual-snapshot's `snap_compare`, with every snapshot taken once the layout has settled
    (tests.waiting.settle_layout) after the test's own `run_before`: its waits name the state it means,
    this one the rendering (a table's columns measured) that no state shows."""
    import inspect

    from tests.waiting import settle_layout

    def compare(app, *args, run_before=None, **kwargs):  # type: ignore[no-untyped-def]
        async def settled(pilot):  # type: ignore[no-untyped-def]
            if run_before is not None:
                result = run_before(pilot)
                if inspect.isawaitable(result):
                    await result
            await settle_layout(pilot)

        return snap_compare(app, *args, run_before=settled, **kwargs)

    return compare
