"""Migration files: `db/migrations/<version>_<name>.up.sql` (docs/reference-db.md#migrations-golang-migrate-compatible).

Versions are golang-migrate's: the leading digits, compared as integers, so older sequential
files (`1_init.up.sql`) stay valid and sort before 14-digit UTC timestamps
(docs/reference-db.md#migrations-golang-migrate-compatible).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from engine import names
from engine.database.errors import DatabaseAuthoringError
from engine.errors import UsageError

MIGRATIONS_DIR = Path("db") / "migrations"
# golang-migrate's source parser: ^([0-9]+)_(.*)\.(down|up)\.(.*)$ ; we read only .up.sql.
FILE_RE = re.compile(r"^(?P<version>[0-9]+)_(?P<name>.+)\.(?P<direction>up|down)\.sql$")
TIMESTAMP_FORMAT = "%Y%m%d%H%M%S"
TIMESTAMP_DIGITS = 14
MAX_VERSION = 2**63 - 1  # schema_migrations.version is a bigint
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_]*$")


@dataclass(frozen=True)
class MigrationFile:
    version: int
    name: str
    path: Path

    @property
    def filename(self) -> str:
        return self.path.name

    def read(self) -> str:
        return self.path.read_text(encoding="utf-8")


@dataclass(frozen=True)
class MigrationSet:
    directory: Path
    files: list[MigrationFile]
    ignored_down: list[str]

    @property
    def versions(self) -> list[int]:
        return [f.version for f in self.files]

    def by_version(self, version: int) -> MigrationFile | None:
        for f in self.files:
            if f.version == version:
                return f
        return None

    def previous(self, version: int) -> int | None:
        """The version before `version` among the files (None: there is none)."""
        before = [v for v in self.versions if v < version]
        return before[-1] if before else None


def load(directory: Path) -> MigrationSet:
    """The `.up.sql` files of `directory`, sorted by version; duplicate versions are an error."""
    if not directory.is_dir():
        raise DatabaseAuthoringError(f"migrations directory {directory} does not exist",
                                     hint="create it, or pass --dir")
    files: list[MigrationFile] = []
    down: list[str] = []
    seen: dict[int, str] = {}
    for path in sorted(directory.iterdir()):
        m = FILE_RE.match(path.name)
        if not m or not path.is_file():
            continue
        if m["direction"] == "down":
            down.append(path.name)  # forward-only (no down migration, no rollback): never run
            continue
        version = int(m["version"])
        if version > MAX_VERSION:
            raise DatabaseAuthoringError(f"{path.name}: version {version} does not fit a bigint")
        if version in seen:
            raise DatabaseAuthoringError(f"two migrations share version {version}: {seen[version]} and {path.name}",
                                         hint="re-version one of them: framework db migration rebase <path>")
        seen[version] = path.name
        files.append(MigrationFile(version, m["name"], path))
    files.sort(key=lambda f: f.version)
    return MigrationSet(directory, files, down)


def timestamp_version(moment: datetime) -> int:
    return int(moment.astimezone(UTC).strftime(TIMESTAMP_FORMAT))


def is_timestamp(version: int) -> bool:
    text = str(version)
    if len(text) != TIMESTAMP_DIGITS:
        return False
    try:
        datetime.strptime(text, TIMESTAMP_FORMAT)
    except ValueError:
        return False
    return True


def next_versions(existing: list[int], count: int = 1, now: datetime | None = None) -> list[int]:
    """`count` fresh UTC timestamps sorting after every existing version, also when the clock is
    behind (then one second after the newest, still a valid 14-digit timestamp)."""
    moment = (now or datetime.now(UTC)).replace(microsecond=0)
    newest = max(existing, default=0)
    if newest >= timestamp_version(moment):
        if is_timestamp(newest):
            moment = datetime.strptime(str(newest), TIMESTAMP_FORMAT).replace(tzinfo=UTC) + timedelta(seconds=1)
        else:
            raise DatabaseAuthoringError(f"the newest version {newest} is not a timestamp and sorts after now",
                                         hint="versions are 14-digit UTC timestamps")
    out = []
    for i in range(count):
        out.append(timestamp_version(moment + timedelta(seconds=i)))
    return out


def check_name(name: str) -> str:
    name = names.length(name, "migration", names.MAX_MIGRATION_NAME)
    slug = re.sub(r"[^a-z0-9]+", "_", name.strip().lower()).strip("_")
    if not slug or not NAME_RE.match(slug):
        raise UsageError(f"migration name {name!r} has no letters or digits",
                         hint="e.g. framework db migration new add_users")
    return slug
