"""The map's content cache (docs/reference-project.md#project-map): each file's sha256 and hash-marker state,
keyed by (path, size, mtime_ns) in `.framework/cache/map.json`, so a second map re-reads only the files that
changed. The cache directory ignores itself (a `.gitignore` of `*`), as pytest's and ruff's caches do."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from engine.authoring import markers
from engine.paths import atomic_write_bytes

CACHE_DIR = Path(".framework") / "cache"
CACHE = CACHE_DIR / "map.json"
VERSION = 1
# Files larger than this are hashed but never searched for a marker (no generated file is this big).
MARKER_LIMIT = 4 * 1024 * 1024


class HashCache:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.entries: dict[str, list[object]] = {}  # path -> [size, mtime_ns, marker state, sha256]
        self.changed = False
        self.reads = 0  # files read this run (the bench and the tests check that a warm run reads only changes)
        try:
            data = json.loads((root / CACHE).read_text(encoding="utf-8"))
            if isinstance(data, dict) and data.get("version") == VERSION and isinstance(data.get("files"), dict):
                self.entries = data["files"]
        except (OSError, ValueError):
            self.entries = {}  # absent or unreadable: rebuilt, never an error

    def state(self, rel: str, size: int, mtime_ns: int) -> tuple[str, str]:
        """(marker state, sha256) of the file at `rel`, read only when its size or mtime changed."""
        entry = self.entries.get(rel)
        if isinstance(entry, list) and len(entry) == 4 and entry[0] == size and entry[1] == mtime_ns:
            return str(entry[2]), str(entry[3])
        data = (self.root / rel).read_bytes()
        self.reads += 1
        state = "missing"
        if len(data) <= MARKER_LIMIT and markers.MARKER_WORD.encode() in data:
            try:
                state = markers.check(rel, data.decode("utf-8"))
            except UnicodeDecodeError:
                state = "missing"
        sha = hashlib.sha256(data).hexdigest()
        self.entries[rel] = [size, mtime_ns, state, sha]
        self.changed = True
        return state, sha

    def save(self, present: set[str]) -> None:
        """Write the cache when it changed (entries of files that are gone are dropped); a read-only checkout
        is mapped all the same, uncached."""
        stale = set(self.entries) - present
        if not self.changed and not stale:
            return
        for rel in stale:
            del self.entries[rel]
        body = json.dumps({"version": VERSION, "files": self.entries}, separators=(",", ":"))
        write_cache(self.root, self.root / CACHE, body)


def write_cache(root: Path, path: Path, text: str) -> None:
    """Write a file under the checkout's `.framework/cache/` (the map's hashes, the libraries' signatures). The
    cache directory ignores itself (a `.gitignore` of `*`, as pytest's and ruff's caches do); a checkout that
    cannot be written is answered all the same, uncached."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        ignore = root / CACHE_DIR / ".gitignore"
        if not ignore.exists():
            atomic_write_bytes(ignore, b"# the framework's caches: never committed\n*\n", durable=False)
        atomic_write_bytes(path, text.encode("utf-8"), durable=False)
    except OSError:
        pass
