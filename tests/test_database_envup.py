"""`framework env up` with a dev PostgreSQL workload (a first-boot dev database whose seedable
tables are all empty is auto-seeded; `--no-seed`: docs/reference-db.md#env-up-and-the-dashboard)."""

from __future__ import annotations

import hashlib
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import devstack_fixtures as fx  # noqa: E402
from devstack_fixtures import framework_json, git  # noqa: E402

from tests.database_fixtures import query  # noqa: E402

demo_repo, stacks_cleanup = fx.demo_repo, fx.stacks_cleanup  # fixtures


@pytest.fixture
def data_dirs(demo_repo) -> Iterator[None]:
    """Removes the dev PostgreSQL data directories of this test (after stacks_cleanup stops them)."""
    repo, base = demo_repo
    yield
    key = hashlib.sha1(f"{repo.resolve()}:{base + 10}".encode()).hexdigest()[:12]
    shutil.rmtree(Path(tempfile.gettempdir()) / "framework-dev-postgres" / key, ignore_errors=True)

def _with_database(repo: Path, port: int) -> str:
    """The demo's dev environment with its PostgreSQL workload moved to a free port."""
    main = repo / "deploy" / "kcl" / "dev" / "main.k"
    main.write_text(main.read_text().replace("55432", str(port)))
    git(repo, "commit", "-qam", "dev database port")
    return f"postgresql://postgres@127.0.0.1:{port}/demo"


def test_env_up_migrates_and_seeds_on_first_boot_only(demo_repo, data_dirs, stacks_cleanup) -> None:
    """env up dev -D database=true: the demo's PostgreSQL workload starts, migrations are applied
    and, on first boot with every seedable table empty, the database is seeded; a second up finds
    rows and seeds nothing; down/up keeps the data (the data directory persists)."""
    repo, base = demo_repo
    url = _with_database(repo, base + 10)
    doc = framework_json("env", "up", "dev", "--no-build", "-D", "database=true", cwd=repo)
    assert doc["ok"], doc
    assert "db" in [p["name"] for p in doc["processes"]]
    assert doc["seed"] == "migrated to 20250101000000; seeded 40 rows (first boot)"
    assert query(url, "SELECT count(*) FROM visitors") == [(10,)]
    assert query(url, "SELECT count(DISTINCT message) FROM greetings") == [(3,)]
    assert framework_json("env", "down", "dev", cwd=repo)["ok"]
    doc = framework_json("env", "up", "dev", "--no-build", "-D", "database=true", cwd=repo)
    assert doc["ok"] and doc["seed"] == "migrated to 20250101000000; not seeded: seedable tables already hold rows"
    assert query(url, "SELECT count(*) FROM greetings") == [(30,)]
    code_doc = framework_json("db", "seed", "status", "--dsn", url, cwd=repo)
    assert {t["table"]: t["seeded"] for t in code_doc["tables"]} == {"greetings": 30, "visitors": 10}


def test_env_up_no_seed_migrates_but_does_not_seed(demo_repo, data_dirs, stacks_cleanup) -> None:
    """env up --no-seed: migrations still run, seeding is skipped; all tables stay empty."""
    repo, base = demo_repo
    url = _with_database(repo, base + 10)
    doc = framework_json("env", "up", "dev", "--no-build", "--no-seed", "-D", "database=true", cwd=repo)
    assert doc["ok"] and doc["seed"] == "migrated to 20250101000000; seeding disabled (--no-seed)"
    assert query(url, "SELECT (SELECT count(*) FROM visitors) + (SELECT count(*) FROM greetings)") == [(0,)]
