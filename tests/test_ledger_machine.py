"""The machine ledger: compare-and-set, append-only gates, export/import, where, crash safety
(docs/reference-deploy.md#commands)."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import cli_fork
from deploy_fixtures import demo_fixture, git  # noqa: E402,F401

from engine.ledger.store import Gate, Ledger, PromotionConflict, RolloutInFlight  # noqa: E402

IMAGES = {"api": {"kind": "file", "coordinate": "files:api", "digest": "sha256:" + "a" * 64}}


@pytest.fixture
def ledger(tmp_path, monkeypatch):
    monkeypatch.setenv("FRAMEWORK_LEDGER_HOME", str(tmp_path / "ledger"))
    with Ledger.open("proj") as led:
        yield led


def test_compare_and_set_refuses_a_moved_environment(ledger):
    """Every release deploy is a compare-and-set: refused (exit 3) when current moved since the plan read it."""
    first = ledger.append_promotion("dev", "v1", IMAGES, direction="INITIAL", expected_current=None)
    with pytest.raises(PromotionConflict) as err:
        ledger.append_promotion("dev", "v2", IMAGES, direction="AHEAD", expected_current=None)
    assert err.value.exit_code == 3
    second = ledger.append_promotion("dev", "v2", IMAGES, direction="AHEAD", expected_current=first.id)
    assert ledger.current_id("dev") == second.id and second.previous_id == first.id
    assert [p.release for p in ledger.history("dev")] == ["v2", "v1"]
    assert ledger.count("other") == 0  # keyed per environment


def test_ledger_is_keyed_by_project(tmp_path, monkeypatch):
    """The machine ledger is keyed by project: two projects never see each other's promotions."""
    monkeypatch.setenv("FRAMEWORK_LEDGER_HOME", str(tmp_path))
    with Ledger.open("a") as a, Ledger.open("b") as b:
        a.append_promotion("dev", "v1", IMAGES, direction="INITIAL", expected_current=None)
        assert b.current("dev") is None and a.current("dev").release == "v1"


def test_rollout_in_flight_is_declined_unless_supersede(ledger):
    """Exit 4 rollout_in_flight: an unfinished rollout by a live process declines a new promotion."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        seq = ledger.start_apply("dev", None, "v0")
        ledger.conn.execute("UPDATE applies SET pid=? WHERE seq=?", (child.pid, seq))
        with pytest.raises(RolloutInFlight) as err:
            ledger.append_promotion("dev", "v1", IMAGES, direction="INITIAL", expected_current=None)
        assert err.value.exit_code == 4 and ledger.current_id("dev") is None
        p = ledger.append_promotion(
            "dev", "v1", IMAGES, direction="INITIAL", expected_current=None, supersede=True
        )
        assert p.supersede and ledger.apply_superseded(seq)
    finally:
        child.kill()
        child.wait()
    # a rollout whose process died is abandoned, not in flight
    ledger.conn.execute("UPDATE applies SET superseded_by_pid=NULL")
    ledger.append_promotion("dev", "v2", IMAGES, direction="AHEAD", expected_current=ledger.current_id("dev"))


def test_gates_append_only_idempotent_and_ordered(ledger):
    """Gates: idempotent on (promotion, check, run id); promote-time first, then later ones oldest first."""
    p = ledger.append_promotion(
        "dev",
        "v1",
        IMAGES,
        direction="INITIAL",
        expected_current=None,
        gates=[Gate(name="unit", status="passed", run_id="1.1")],
    )
    assert ledger.record_gate("dev", p.id, Gate(name="smoke", status="failed", run_id="1.1"))
    assert not ledger.record_gate("dev", p.id, Gate(name="smoke", status="passed", run_id="1.1"))
    assert ledger.record_gate("dev", p.id, Gate(name="smoke", status="passed", run_id="1.2"))
    assert [(g.name, g.status, g.run_id, g.at_promote) for g in ledger.gates(p.id)] == [
        ("unit", "passed", "1.1", True),
        ("smoke", "failed", "1.1", False),
        ("smoke", "passed", "1.2", False),
    ]


def test_unreadable_ledger_is_a_clear_error(tmp_path, monkeypatch):
    """An unreadable ledger is an error with a message, never a traceback (deploy exit 1)."""
    home = tmp_path / "ledger"
    home.mkdir()
    (home / "ledger.sqlite3").write_bytes(b"this is not a database" * 100)
    monkeypatch.setenv("FRAMEWORK_LEDGER_HOME", str(home))
    from engine.ledger.store import LedgerUnreadable

    with pytest.raises(LedgerUnreadable):
        Ledger.open("x").current("dev")


def test_release_where_exit_codes(demo):
    """release where: 0 bound somewhere, 1 exists but unbound or never cut, 2 ledger unreadable."""
    demo.run("env", "build", "dev", "--release", "v1", check=True)
    code, doc = demo.json("release", "where", "v1")
    assert code == 1 and doc["cut"] is True and doc["error"]["code"] == "unbound"
    code, doc = demo.json("release", "where", "v9")
    assert code == 1 and doc["cut"] is False and doc["error"]["code"] == "never_cut"
    assert demo.json("env", "deploy", "dev", "v1", "--yes", "--no-wait")[0] == 0
    code, doc = demo.json("release", "where", "v1")
    assert code == 0 and [e["env"] for e in doc["environments"]] == ["dev"]
    code, doc = demo.json("release", "where", "v1", "--env", "staging")
    assert code == 1
    db = Path(demo.env["FRAMEWORK_LEDGER_HOME"]) / "ledger.sqlite3"
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    db.write_bytes(b"garbage" * 1000)
    code, doc = demo.json("release", "where", "v1")
    assert code == 2 and doc["error"]["code"] == "ledger_unreadable"


def test_ledger_show_where_export_import_roundtrip(demo, tmp_path):
    """ledger show/where/export; import is a dry run unless --apply, idempotent, refuses a non-empty env."""
    assert demo.json("env", "deploy", "dev", "--yes", "--no-wait")[0] == 0
    demo.run("gate", "record", "dev", "--name", "smoke", "--status", "passed", check=True)
    code, where = demo.json("ledger", "where", "dev")
    assert where["backend"] == "machine" and "no framework.ControlPlane" in where["declaration"]
    code, where = demo.json("ledger", "where", "cloud")
    assert where["backend"] == "control_plane"
    out = tmp_path / "export"
    code, exp = demo.json("ledger", "export", "--dir", str(out))
    assert code == 0 and exp["files"] == {"dev": 1}
    rows = [json.loads(line) for line in (out / "dev.jsonl").read_text().splitlines()]
    assert rows[0]["gates"][0]["name"] == "smoke"
    # import into a fresh ledger
    fresh = dict(demo.env, FRAMEWORK_LEDGER_HOME=str(tmp_path / "fresh"))
    run = lambda *a: cli_fork.run(  # noqa: E731
        [str(Path(sys.executable).parent / "framework"), *a, "--json"],
        cwd=demo.root,
        env=fresh,
        capture_output=True,
        text=True,
    )
    dry = run("ledger", "import", "--from-file-ledger", str(out))
    assert dry.returncode == 0 and json.loads(dry.stdout)["environments"][0]["imported"] == 1
    assert json.loads(run("ledger", "show", "dev").stdout)["promotions"] == []
    done = run("ledger", "import", "--from-file-ledger", str(out), "--apply")
    assert done.returncode == 0, done.stderr
    shown = json.loads(run("ledger", "show", "dev").stdout)["promotions"]
    assert [p["id"] for p in shown] == [rows[0]["id"]] and shown[0]["gates"][0]["name"] == "smoke"
    again = run("ledger", "import", "--from-file-ledger", str(out), "--apply")
    assert again.returncode == 0 and json.loads(again.stdout)["environments"][0]["already_present"] == 1
    # an environment that already holds other promotions is refused
    code, doc = demo.json("ledger", "import", "--from-file-ledger", str(out), "--apply")
    assert code == 0  # same ids: idempotent
    (out / "dev.jsonl").write_text(json.dumps({**rows[0], "id": "prm_other"}) + "\n")
    code, doc = demo.json("ledger", "import", "--from-file-ledger", str(out), "--apply")
    assert code == 1 and "already holds promotions" in doc["error"]["message"]


def test_import_from_git_reads_committed_history_not_the_working_tree(demo):
    """--from-git [--rev] reads legacy .framework/promotions/<env>.jsonl from committed history only;
    the legacy files are never read by deploy or status."""
    legacy = demo.root / ".framework" / "promotions"
    legacy.mkdir(parents=True)
    line = {
        "id": "legacy-1",
        "release": "v0",
        "images": {},
        "who": "ci",
        "created_at": "2024-01-02T03:04:05Z",
    }
    (legacy / "dev.jsonl").write_text(json.dumps(line) + "\n")
    demo.commit("legacy ledger")
    (legacy / "dev.jsonl").write_text(json.dumps({**line, "id": "uncommitted"}) + "\n")
    code, doc = demo.json("env", "status", "dev")
    assert doc["environments"][0]["promotion"] is None  # legacy files are not read
    code, doc = demo.json("ledger", "import", "--from-git", "--rev", "main", "--apply")
    assert code == 0, doc
    code, shown = demo.json("ledger", "show", "dev")
    assert [p["id"] for p in shown["promotions"]] == ["legacy-1"]
    assert shown["promotions"][0]["source"] == "import"
    code, doc = demo.json("ledger", "import", "--from-git")  # default rev origin/main does not exist here
    assert code == 1 and "origin/main" in doc["error"]["message"]


KILLER = """
import sys
from engine.ledger.store import Ledger
led = Ledger.open("crash")
images = {f"w{i}": {"kind": "file", "coordinate": "x" * 200, "digest": "sha256:" + "b" * 64} for i in range(50)}
print("ready", flush=True)
while True:
    led.append_promotion("dev", "v", images, direction="AHEAD", expected_current=led.current_id("dev"))
"""


def test_sigkill_never_leaves_a_half_written_promotion(tmp_path):
    """Crash safety: killing the writer at any point leaves the ledger readable and every promotion whole."""
    env = {"FRAMEWORK_LEDGER_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    for delay in (0.05, 0.2, 0.35, 0.5):
        proc = subprocess.Popen([sys.executable, "-c", KILLER], env=env, stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(delay)  # kill at an arbitrary point of the append loop (not synchronisation)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        conn = sqlite3.connect(tmp_path / "ledger.sqlite3")
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.close()
        with Ledger.open("crash", tmp_path / "ledger.sqlite3") as led:
            history = led.history("dev", limit=10**6)
            assert all(len(p.images) == 50 for p in history)
            assert led.current_id("dev") == (history[0].id if history else None)
            ids = [p.id for p in history]
            assert all(
                p.previous_id == (ids[i + 1] if i + 1 < len(ids) else None) for i, p in enumerate(history)
            )


def test_sigkill_during_cut_never_leaves_a_half_written_release(demo):
    """Crash safety: a release file is either absent or whole after the cut is killed."""
    for i, delay in enumerate((0.3, 0.6, 0.9)):
        proc = cli_fork.popen(
            [str(Path(sys.executable).parent / "framework"), "env", "build", "dev", "--release", f"k{i}"],
            cwd=demo.root,
            env=demo.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        path = demo.root / ".framework" / "releases" / f"k{i}.json"
        if path.exists():
            assert json.loads(path.read_text())["version"] == f"k{i}"
    leftovers = (
        [p for p in (demo.root / ".framework" / "releases").glob("*") if not p.name.endswith(".json")]
        if (demo.root / ".framework" / "releases").exists()
        else []
    )
    assert all(p.name.startswith(".") for p in leftovers)  # only temp files, never a half release


def test_many_commands_opening_a_new_ledger_at_once_all_write(tmp_path):
    """docs/reference-devstack.md#files (local session: one row per worktree): commands that open a
    brand-new ledger at the same moment (two `env up` in two worktrees) race to create it and switch it
    to WAL; none may fail."""
    path = tmp_path / "ledger.sqlite3"
    repo = Path(__file__).resolve().parent.parent
    code = (  # every process imports first, then all open at one agreed instant (the race, made likely)
        "import sys, time\nfrom pathlib import Path\nfrom engine.ledger.store import Ledger\n"
        "time.sleep(max(0.0, float(sys.argv[3]) - time.time()))\n"
        "with Ledger.open('demo', Path(sys.argv[1])) as l:\n    l.upsert_session(sys.argv[2], 'dev', 'b', False)\n"
    )
    at = str(time.time() + 3)
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path), f"wt{i}", at], cwd=repo,
                              stderr=subprocess.PIPE, text=True) for i in range(16)]
    errors = [p.communicate(timeout=60)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 16, errors
    with Ledger.open("demo", path) as ledger:
        assert sorted(s.worktree for s in ledger.list_sessions("dev")) == sorted(f"wt{i}" for i in range(16))
