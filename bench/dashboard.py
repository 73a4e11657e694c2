"""Time to first paint of the dashboard on the demo project, against a bare Textual app with one
empty DataTable, both measured in the same run as whole processes (import, build, first frame).

Each app runs headless and exits on Textual's `Ready` event (sent once the first frame is shown).
Aim: <= 1.1x.

Second half: opening the webhook delivery history of a trigger with 100,000 deliveries against
one with 100, in the same run, on a real `platform server` over a seeded SQLite store; timed from
pushing the history screen until its first page is painted. Aim: <= 2x (the screen
loads one page through the server's cursor, never the whole history).

    python bench/dashboard.py [--runs N] [--only paint|history]
    BENCH_SMOKE=1: one run, no warm-up round, histories of 60 and 600 deliveries (tests/test_bench_smoke.py)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SMOKE = os.environ.get("BENCH_SMOKE") == "1"  # tiny sizes, one round, no aim (tests/test_bench_smoke.py)

BARE = """
from textual.app import App
from textual.widgets import DataTable
class Bare(App):
    def compose(self):
        yield DataTable()
    def on_ready(self):
        self.exit()
Bare().run(headless=True, size=(120, 36))
"""

# What a user gets: settings loaded as `framework` loads them (HOME is a fresh dir: no settings file).
DASHBOARD = """
from app.dashboard import Dashboard
class FirstPaint(Dashboard):
    def on_ready(self):
        self.exit()
FirstPaint().run(headless=True, size=(120, 36))
"""


def wall(code: str, cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(proc.stderr.decode()[-800:])
    return elapsed


def first_paint(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        demo = Path(tmp) / "demo"
        shutil.copytree(REPO / "examples" / "demo", demo)
        env = {**os.environ, "XDG_CACHE_HOME": str(Path(tmp) / "cache"), "HOME": tmp}
        if not SMOKE:  # warm-up: fills the KCL cache and the bytecode caches (smoke: one cold run is proof enough)
            wall(DASHBOARD, demo, env)
            wall(BARE, demo, env)
        bare, dash = [], []
        for _ in range(args.runs):
            bare.append(wall(BARE, demo, env))
            dash.append(wall(DASHBOARD, demo, env))
    b, d = statistics.median(bare), statistics.median(dash)
    print(f"{'app':40} {'median ms':>10} {'ratio':>7}")
    print(f"{'bare Textual app + empty DataTable':40} {b * 1000:10.1f} {1.0:6.2f}x")
    print(f"{'dashboard on examples/demo':40} {d * 1000:10.1f} {d / b:6.2f}x   aim <= 1.1x")


ADMIN_TOKEN = "plt_bench-admin-token"


def seed(data_dir: Path, sizes: dict[str, int]) -> None:
    """A real server store: migrations applied, one automation, a trigger per size with that many
    recorded deliveries (every tenth with a finished run), and a known admin API token."""
    import json

    from engine.auth.bearer import token_hash
    from engine.hooks.models import TriggerDefinition
    from engine.serverstore import store
    from engine.serverstore.migrations import up
    from engine.serverstore.url import DB_FILE

    data_dir.mkdir(parents=True)
    engine = store.open_engine(f"sqlite:///{data_dir / DB_FILE}")
    up(engine)
    t0 = store.now_us() - 10**11
    workflow = "name: bench\nmodel: {provider: scripted, steps: [{message: ok}]}\ninstructions: x\n"
    with store.write(engine) as conn:
        conn.execute(store.api_tokens.insert().values(name="admin", token_hash=token_hash(ADMIN_TOKEN),
                                                      created_at=t0))
        conn.execute(store.automations.insert().values(id="aut_bench", name="bench", workflow_name="bench",
                                                       workflow_source=workflow, created_at=t0))
        for name, count in sizes.items():
            trigger_id = f"trg_{name}"
            conn.execute(store.triggers.insert().values(
                id=trigger_id, automation_id="aut_bench", name=name,
                definition=TriggerDefinition(name=name).model_dump_json(), enabled=True, token_hash=None,
                hmac_secret_sealed=None, activated_at=t0, rotated_at=None, created_at=t0))
            for start in range(0, count, 10_000):
                rows, runs = [], []
                for i in range(start, min(count, start + 10_000)):
                    at = t0 + i * 1000
                    delivery_id = f"dlv_{at:014x}{name[0]}{i:09x}"
                    payload = {"body": {"ref": "main", "n": i}, "headers": {"content-type": "application/json"},
                               "query": {}, "content_type": "application/json"}
                    rows.append({"id": delivery_id, "trigger_id": trigger_id, "automation_id": "aut_bench",
                                 "received_at": at, "status_code": 202, "outcome": "run_started",
                                 "auth_method": "bearer", "dedupe_key": f"key:{i:064x}", "duplicate_of": None,
                                 "payload": json.dumps(payload), "body_bytes": 24, "run_id": None,
                                 "detail": None, "updated_at": at})
                    if i % 10 == 0:
                        runs.append({"id": f"run_{name}_{i}", "automation_id": "aut_bench",
                                     "delivery_id": delivery_id, "status": "succeeded", "started_at": at,
                                     "finished_at": at + 500, "steps": 1, "error": None, "record": None})
                conn.execute(store.deliveries.insert(), rows)
                if runs:
                    conn.execute(store.runs.insert(), runs)
    engine.dispose()


def open_history(url: str, sizes: list[str], runs: int) -> dict[str, list[float]]:
    """Push the history screen headless and time it until its first page is painted."""
    import asyncio

    from app.dashboard import Dashboard
    from app.settings import deterministic_settings
    from screens.webhooks.history import HistoryLoaded, WebhookHistoryScreen

    class Timed(WebhookHistoryScreen):
        def __init__(self, trigger: str, shown: asyncio.Event) -> None:
            super().__init__("bench", trigger)
            self.shown = shown

        def on_history_loaded(self, message: HistoryLoaded) -> None:
            super().on_history_loaded(message)
            if message.error is not None:
                raise SystemExit(f"history failed: {message.error.message}")
            self.call_after_refresh(self.shown.set)

    async def scenario() -> dict[str, list[float]]:
        times: dict[str, list[float]] = {name: [] for name in sizes}
        settings = deterministic_settings(platform_server_url=url, platform_token=ADMIN_TOKEN,
                                          refresh_seconds=3600)
        app = Dashboard(project_dir=REPO / "examples" / "demo", settings=settings)
        async with app.run_test(size=(140, 40)) as pilot:
            warm = 0 if SMOKE else 1  # the first round warms imports and connections (not in smoke mode)
            for n in range(runs + warm):
                # Alternate the order so neither size always follows the other's teardown.
                for name in sizes if n % 2 else list(reversed(sizes)):
                    shown = asyncio.Event()
                    start = time.perf_counter()
                    await app.push_screen(Timed(name, shown))
                    await shown.wait()
                    elapsed = time.perf_counter() - start
                    assert len(app.screen.page.deliveries) == 50, "one page of 50 is shown"
                    if n >= warm:
                        times[name].append(elapsed)
                    await app.pop_screen()
                    await pilot.pause()
                    await app.workers.wait_for_complete()
        return times

    return asyncio.run(scenario())


def history_bench(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(REPO))
    sizes = {"small": 60, "large": 600} if SMOKE else {"small": 100, "large": 100_000}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        started = time.perf_counter()
        seed(data, sizes)
        print(f"seeded {sum(sizes.values()):,} deliveries in {time.perf_counter() - started:.1f} s")
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DATABASE_DRIVER")}
        env.update(HOME=tmp, XDG_CACHE_HOME=str(Path(tmp) / "cache"))
        server = subprocess.Popen([sys.executable, "-m", "app.main", "platform", "server", "--port", "0",
                                   "--data-dir", str(data)], cwd=REPO, env=env, text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            assert server.stdout is not None
            url = ""
            for line in server.stdout:
                if line.startswith("platform server listening on "):
                    url = line.rsplit(" ", 1)[1].strip()
                    break
            if not url:
                raise SystemExit("platform server did not start")
            times = open_history(url, list(sizes), args.runs)
        finally:
            server.terminate()
            server.wait(15)
    small, large = statistics.median(times["small"]), statistics.median(times["large"])
    print(f"{'history view, first page shown':40} {'median ms':>10} {'ratio':>7}")
    labels = {name: f"trigger with {count:,} deliveries" for name, count in sizes.items()}
    print(f"{labels['small']:40} {small * 1000:10.1f} {1.0:6.2f}x")
    print(f"{labels['large']:40} {large * 1000:10.1f} {large / small:6.2f}x   aim <= 2x")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1 if SMOKE else 11)
    parser.add_argument("--only", choices=("paint", "history"), default=None)
    args = parser.parse_args()
    if args.only != "history":
        first_paint(args)
    if args.only != "paint":
        history_bench(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
