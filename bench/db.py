"""Database authoring against baselines measured in the same run
(docs/reference-db.md#benchmarks).

1. `framework db migrate up` of 1,000 small migrations against golang-migrate's `migrate up` on
   the same files (aim <= 1.2x). Both are whole CLI processes on fresh databases of one
   throwaway PostgreSQL; rounds alternate which tool goes first.
2. `db seed apply` of 100,000 rows across 10 related tables (engine call, one transaction)
   against loading the very same rows with COPY (aim <= 3x).

    python bench/db.py [--migrations 1000] [--rows 100000] [--rounds 3]
    BENCH_SMOKE=1: 10 migrations, 100 rows, one round (tests/test_bench_smoke.py)
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
BIN = Path(sys.executable).parent
SMOKE = os.environ.get("BENCH_SMOKE") == "1"  # tiny sizes, one round, no aim (tests/test_bench_smoke.py)
sys.path.insert(0, str(REPO))

from engine.database import throwaway  # noqa: E402
from engine.database.dsn import Dsn, connect  # noqa: E402


def tool(name: str) -> str:
    local = REPO / ".tools" / "bin" / name
    found = str(local) if local.is_file() else shutil.which(name)
    if not found:
        raise SystemExit(f"{name} is missing: run `make go-tools`")
    return found


def create(admin: Dsn, name: str) -> Dsn:
    with connect(admin) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return Dsn(admin.url.replace("/postgres?", f"/{name}?", 1))


def timed(argv: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, **(env or {})}, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{argv[0]} exited {proc.returncode}: {proc.stderr[-800:]}")
    return elapsed


def migrations(directory: Path, count: int) -> None:
    (directory / "20000101000000_base.up.sql").write_text("CREATE TABLE base (id bigint PRIMARY KEY);\n")
    for i in range(1, count):
        version = 20000101000000 + i  # valid while i < 60; numeric order is all either tool needs
        (directory / f"{version}_step_{i}.up.sql").write_text(
            f"ALTER TABLE base ADD COLUMN c{i} integer;\nCOMMENT ON COLUMN base.c{i} IS 'step {i}';\n")


def bench_migrate(admin: Dsn, count: int, rounds: int) -> float:
    ours, theirs = [], []
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        migrations(d, count)
        for r in range(rounds):
            order = ("ours", "theirs") if r % 2 == 0 else ("theirs", "ours")
            for who in order:
                target = create(admin, f"bench_{who}")
                if who == "ours":
                    ours.append(timed([str(BIN / "framework"), "db", "migrate", "up", "--dir", str(d), "--json"],
                                      {"DATABASE_URL": target.url}))
                else:
                    url = target.url.replace("postgresql://", "postgres://", 1) + "&sslmode=disable"
                    theirs.append(timed([tool("migrate"), "-path", str(d), "-database", url, "up"]))
    o, t = statistics.median(ours), statistics.median(theirs)
    print(f"{'migrate up, ' + str(count) + ' files':34} {'ours s':>8} {'golang-migrate s':>17} {'ratio':>6} aim")
    print(f"{'':34} {o:8.2f} {t:17.2f} {o / t:5.2f}x <= 1.2x")
    return o / t


SCHEMA = ["CREATE TABLE t0 (id bigserial PRIMARY KEY, name text NOT NULL, created_at timestamptz NOT NULL)"]
for _i in range(1, 10):
    SCHEMA.append(f"CREATE TABLE t{_i} (id bigserial PRIMARY KEY, parent_id bigint NOT NULL REFERENCES "
                  f"t{(_i - 1) // 2}(id), label text, amount numeric(12,2), ok boolean NOT NULL, at date)")


def bench_seed(admin: Dsn, rows: int, rounds: int) -> float:
    from engine.database.seeds import apply as seeds

    per_table = rows // 10
    ours, copies = [], []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "db" / "seeds").mkdir(parents=True)
        (root / "db" / "seeds" / "vocab.yaml").write_text(f"rows: {per_table}\n")
        for _ in range(rounds):
            seeded, baseline = create(admin, "bench_seed"), create(admin, "bench_copy")
            for target in (seeded, baseline):
                with connect(target) as conn:
                    for ddl in SCHEMA:
                        conn.execute(ddl)
            start = time.perf_counter()
            result = seeds.apply(seeded, root, {})
            ours.append(time.perf_counter() - start)
            assert sum(result.inserted.values()) == per_table * 10, result.inserted
            dumps = {}
            with connect(seeded) as conn, conn.cursor() as cur:
                for i in range(10):
                    with cur.copy(f"COPY t{i} TO STDOUT") as copy:
                        dumps[i] = b"".join(bytes(chunk) for chunk in copy)
            start = time.perf_counter()
            with connect(baseline, autocommit=False) as conn, conn.cursor() as cur:
                for i in range(10):
                    with cur.copy(f"COPY t{i} FROM STDIN") as copy:
                        copy.write(dumps[i])
                conn.commit()
            copies.append(time.perf_counter() - start)
    o, c = statistics.median(ours), statistics.median(copies)
    print(f"{'seed apply, ' + str(rows) + ' rows, 10 tables':34} {'ours s':>8} {'COPY s':>17} {'ratio':>6} aim")
    print(f"{'':34} {o:8.2f} {c:17.2f} {o / c:5.2f}x <= 3x")
    return o / c


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--migrations", type=int, default=10 if SMOKE else 1000)
    parser.add_argument("--rows", type=int, default=100 if SMOKE else 100_000)
    parser.add_argument("--rounds", type=int, default=1 if SMOKE else 3)
    args = parser.parse_args()
    with throwaway.server() as (admin, _prefix):
        bench_migrate(admin, args.migrations, args.rounds)
        bench_seed(admin, args.rows, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
