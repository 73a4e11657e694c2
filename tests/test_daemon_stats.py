"""`platform daemon stats` (docs/reference-daemon.md#daemon-stats): a running daemon samples its sessions
and the file bytes it moves into `stats.jsonl`; the command reads them into one-minute columns of
throughput and session count."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import cli_fork
import pytest

from engine.daemon import stats as daemon_stats
from tests.gateway_fixtures import ROOT, Stack, make_stack, registered
from tests.waiting import until

NAME = "pics"


def write_samples(instances: Path, samples: list[tuple[float, dict[str, int], int, int]]) -> float:
    """Samples at known offsets: (seconds before now, sessions, read bytes, written bytes). Returns now."""
    directory = instances / NAME
    directory.mkdir(parents=True, exist_ok=True)
    now = time.time()
    for ago, sessions, read, written in samples:
        daemon_stats.append_sample(directory, sessions, read, written, at=now - ago)
    return now


def cli(instances: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PLATFORM_INSTANCES_DIR": str(instances)}
    return cli_fork.run([sys.executable, "-m", "app.main", "platform", "daemon", "stats", *args], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=60)


def test_stats_json_has_the_exact_numbers(tmp_path: Path) -> None:
    """docs/reference-daemon.md#daemon-stats: per minute (oldest first) the bytes each way, throughput
    (bytes / 60 s) and the most sessions in a sample; a minute without samples has sessions null. Each
    sample sits 1 s before its minute ends, so a query within 59 s keeps it there."""
    instances = tmp_path / "instances"
    write_samples(instances, [
        (1, {"shell": 1, "file": 2}, 6_000, 0), (31, {"file": 1}, 0, 1_200),   # minute -1
        (121, {}, 0, 0),                                                        # minute -3: idle
        (241, {"terminal": 4}, 60, 60),                                         # minute -5
        (400, {"shell": 9}, 999, 999),                                          # outside 5 minutes
    ])
    done = cli(instances, "--name", NAME, "--minutes", "5", "--json")
    doc = json.loads(done.stdout)
    assert done.returncode == 0 and doc["ok"] is True, done.stderr
    assert (doc["samples"], doc["read_bytes"], doc["written_bytes"], doc["sessions_max"]) == (4, 6_060, 1_260, 4)
    assert [(m["read_bytes"], m["written_bytes"], m["throughput_bps"], m["sessions_max"])
            for m in doc["per_minute"]] == [(60, 60, 2.0, 4), (0, 0, 0.0, None), (0, 0, 0.0, 0),
                                            (0, 0, 0.0, None), (6_000, 1_200, 120.0, 3)]
    human = cli(instances, "--name", NAME, "--minutes", "5")
    assert human.returncode == 0 and "6060 bytes read, 1260 bytes written, at most 4 sessions" in human.stdout


def test_stats_refusals(tmp_path: Path) -> None:
    """docs/reference-daemon.md#daemon-stats: an unknown instance is exit 1 not_found, a bad name or a
    window outside 1-1440 minutes exit 2; one --json document, no traceback."""
    instances = tmp_path / "instances"
    write_samples(instances, [(1, {}, 0, 0)])
    for args, code, error in ((("--name", "nope"), 1, "not_found"), (("--name", "../x"), 2, "usage"),
                              (("--name", NAME, "--minutes", "0"), 2, "usage")):
        done = cli(instances, *args, "--json")
        doc = json.loads(done.stdout)
        assert (done.returncode, doc["exit_code"], doc["error"]["code"]) == (code, code, error), done.stdout
        assert "Traceback" not in done.stderr


def test_samples_file_keeps_the_last_day(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/reference-daemon.md#daemon-stats: past twice MAX_SAMPLES lines the file is cut to the newest
    MAX_SAMPLES; a torn line is skipped when read."""
    monkeypatch.setattr(daemon_stats, "MAX_SAMPLES", 5)
    monkeypatch.setenv("PLATFORM_INSTANCES_DIR", str(tmp_path))
    directory = tmp_path / NAME
    directory.mkdir()
    for i in range(11):  # the file is checked once it is past 2 * 5 * 80 bytes; pad the lines to get there
        daemon_stats.append_sample(directory, {"k" * 60: i}, i, 0, at=1000.0 + i)
    lines = (directory / daemon_stats.STATS_FILE).read_text().splitlines()
    assert [json.loads(line)["read_bytes"] for line in lines] == [6, 7, 8, 9, 10]
    with (directory / daemon_stats.STATS_FILE).open("a") as f:
        f.write('{"at": 10')
    got = daemon_stats.daemon_stats(NAME, 1, now=1011.0)
    assert (got.samples, got.read_bytes) == (5, 40)


@pytest.fixture(scope="module")
def sampled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """A real server and a connected daemon sampling every 0.2 s."""
    s = make_stack(tmp_path_factory.mktemp("daemon-stats"))
    registered(s)
    s.start(env={"PLATFORM_DAEMON_STATS_INTERVAL_S": "0.2"})
    s.connected()
    yield s
    s.stop_all()
    s.srv.stop()


def test_a_running_daemon_samples_the_bytes_it_moves(sampled: Stack) -> None:
    """docs/reference-daemon.md#daemon-stats: file bytes read by the server (on the bulk side channel and on
    the stream) and written to the daemon land in the samples, each byte once."""
    data = os.urandom(3 << 20)
    (sampled.work / "big.bin").write_bytes(data)
    assert sampled.api("POST", "/dev/files/read", json={"path": "big.bin"}).content == data  # bulk
    assert sampled.api("POST", "/dev/files/read", json={"path": "big.bin", "limit": 1000}).status_code == 200
    up = os.urandom(5000)
    assert sampled.api("POST", "/dev/files/write", params={"path": "up.bin"}, content=up).status_code == 200
    path = sampled.instance / daemon_stats.STATS_FILE

    def totals() -> tuple[int, int]:
        rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
        return sum(r["read_bytes"] for r in rows), sum(r["written_bytes"] for r in rows)

    until(lambda: totals() == ((3 << 20) + 1000, 5000), what="the transfers sampled")
    env = {**sampled.env}
    done = cli_fork.run([sys.executable, "-m", "app.main", "platform", "daemon", "stats", "--name", sampled.name,
                           "--minutes", "5", "--json"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=60)
    doc = json.loads(done.stdout)
    assert (doc["read_bytes"], doc["written_bytes"]) == ((3 << 20) + 1000, 5000) and doc["samples"] > 0, doc
