"""`env deploy --supersede` is not undone by the deploy it replaces (docs/reference-deploy.md#supersede):
the superseding deploy writes to the runtime only once the superseded apply's write has its answer, and
a superseded apply never writes again. The old deploy runs in this process (its runtime's first write
held on an event: a slow apply made deterministic); the superseding ones are real CLI processes."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import cli_fork
from deploy_fixtures import FRAMEWORK_BIN, add_gated_env, demo_fixture  # noqa: E402,F401

from tests.waiting import until  # noqa: E402


def _ledger(fn: Any) -> Any:
    from engine.ledger.store import Ledger

    with Ledger.open("demo") as ledger:  # the demo fixture points FRAMEWORK_LEDGER_HOME at its ledger
        return fn(ledger)


def _releases_running(env: str) -> list[str]:
    from engine.paths import ledger_home
    from engine.runtime.process import instances

    return sorted(i.record.get("release", "") for i in instances("demo", env, root=ledger_home()) if i.alive())


def test_superseding_deploy_waits_for_the_old_apply_and_the_runtime_ends_on_the_new_release(demo, tmp_path,
                                                                                        monkeypatch):
    """docs/reference-deploy.md#supersede: an old deploy holding its apply open (its first process start
    held) is superseded. A `--supersede` whose wait budget expires first exits 4
    `superseded_still_applying` having applied nothing; the next one waits (its `supersede_wait` event),
    applies once the old write has its answer, and the runtime ends on the NEW release with the ledger's
    current promotion the new one; the old deploy exits 6 without writing again."""
    from engine.deploy.deploy import deploy
    from engine.deploy.deployment import DeployOptions
    from engine.project import find_project
    from engine.runtime.process import ProcessRuntime

    gate, _port = add_gated_env(demo, "gated")
    gate.write_text("up")
    demo.run("env", "build", "gated", "--release", "v1", check=True)
    svc = demo.root / "services" / "gated" / "main.py"
    svc.write_text(svc.read_text() + "\n# v2\n")
    demo.commit("v2")
    demo.run("env", "build", "gated", "--release", "v2", check=True)

    reached, release = threading.Event(), threading.Event()
    start = ProcessRuntime.start

    def held_start(self: ProcessRuntime, *args: Any, **kw: Any) -> Any:
        if self.release == "v1" and not reached.is_set():  # the old deploy's first write to the runtime
            reached.set()
            release.wait(120)
        return start(self, *args, **kw)

    monkeypatch.setattr(ProcessRuntime, "start", held_start)
    old: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: old.setdefault("result", deploy(
        find_project(demo.root), "gated", DeployOptions(version="v1", yes=True, stability_window=0.3, timeout=120))))
    thread.start()
    try:
        until(reached.is_set, timeout=60, what="the old deploy's first write to the runtime")
        old_promotion = _ledger(lambda lg: lg.current_id("gated"))

        # the wait is bounded: exit 4, this deploy's apply closed failed, nothing of v2 runs
        code, doc = demo.json("env", "deploy", "gated", "v2", "--yes", "--supersede", "--timeout", "1")
        assert code == 4 and doc["error"]["code"] == "superseded_still_applying", doc
        assert "nothing of this deploy was applied" in doc["error"]["message"]
        assert _releases_running("gated") == []
        assert _ledger(lambda lg: lg.applies("gated")[0].outcome) == "failed"

        err_path = tmp_path / "superseder.err"
        with err_path.open("w") as err:
            new = cli_fork.popen([FRAMEWORK_BIN, "env", "deploy", "gated", "v2", "--yes", "--supersede", "--json",
                                  "--events", "--stability-window", "0.3", "--timeout", "120"],
                                 cwd=demo.root, env=demo.env, stdout=subprocess.PIPE, stderr=err, text=True)

        def superseder_waits_or_wrote() -> bool:  # before the fix it would not wait: it would start v2 now
            return "supersede_wait" in err_path.read_text() or "v2" in _releases_running("gated")

        until(superseder_waits_or_wrote, timeout=60, what="the superseding deploy waiting on the old apply")
        release.set()  # the old apply's write now gets its answer
        out, _ = new.communicate(timeout=120)
        thread.join(120)
    finally:
        release.set()
        thread.join(120)
    assert new.returncode == 0, (out, err_path.read_text())
    new_doc = json.loads(out)
    assert new_doc["rollout"]["phase"] == "ready"
    result = old["result"]
    assert result.exit_code == 6 and result.refusal["code"] == "superseded", result
    current = _ledger(lambda lg: lg.current("gated"))
    assert current.release == "v2" and current.id != old_promotion
    assert new_doc["promotion"]["id"] == current.id
    assert _releases_running("gated") == ["v2"]  # the old deploy's v1 was replaced, and never came back
    old_apply = _ledger(lambda lg: lg.apply_for("gated", old_promotion))
    assert old_apply.outcome == "superseded" and old_apply.superseded_by_pid
