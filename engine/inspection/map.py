"""`framework project map` (docs/reference-project.md#project-map): the ownership-annotated tree of a project's
files.

Each file has one ownership, in this order of precedence:
- `disowned`: in `.framework/disowned.json` (out of generation for good);
- `scaffold`: in the birth ledger `.framework/scaffolded.json` (scaffold-once: the user's from birth);
- `drifted`: generated (it carries a `framework:hash` marker or the last generation recorded it) and its marker
  no longer matches its content, or the marker was removed (`markers.check`, the check `ci verify-generated` runs);
- `generated`: the forge space, rewritten by every `framework generate`;
- `user`: everything else.
What git ignores and the vendored directories (.git, node_modules, bin, ...) are left out.
"""

from __future__ import annotations

import fnmatch
import os
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from engine.authoring import record_files, sandbox
from engine.errors import UsageError
from engine.inspection.hashcache import CACHE_DIR, HashCache
from engine.project import Project

OWNERSHIPS = ("user", "generated", "scaffold", "drifted", "disowned")


# Plain dataclasses, not pydantic: `project map --json` starts without importing pydantic (bench/project.py);
# app/output.py renders a dataclass payload as its fields.
@dataclass
class MapNode:
    path: str  # relative to the project root, "/"-separated; "" is the root
    name: str
    kind: str  # dir | file
    depth: int  # 1 for a top-level entry
    ownership: str | None = None  # files: one of OWNERSHIPS
    present: bool = True  # false: a generated file the last generation recorded, deleted since
    sha256: str | None = None
    counts: dict[str, int] = field(default_factory=dict)  # directories: files per ownership in the subtree


@dataclass
class ProjectMap:
    root: str
    files: int
    counts: dict[str, int]
    depth: int | None = None
    filter: list[str] = field(default_factory=list)
    nodes: list[MapNode] = field(default_factory=list)
    read: int = 0  # files read this run (the others came from the cache)


@dataclass
class FileOwnership:
    path: str
    ownership: str
    present: bool = True
    sha256: str | None = None


_CACHE_PREFIX = f"{CACHE_DIR.as_posix()}/"


def _skipped(rel: str) -> bool:
    if "/" not in rel:
        return False
    return rel.startswith(_CACHE_PREFIX) or not sandbox.SKIP.isdisjoint(rel.split("/")[:-1])


def _git_files(root: Path) -> list[str] | None:
    """Tracked and untracked-but-not-ignored files under `root` (git's own ignore rules), or None outside git."""
    try:
        proc = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."],
                              cwd=root, capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    return sorted({p for p in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if p})


def _ignore_patterns(root: Path) -> list[str]:
    try:
        lines = (root / ".gitignore").read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    return [line.strip() for line in lines if line.strip() and not line.startswith(("#", "!"))]


def _ignored(rel: str, patterns: list[str]) -> bool:
    """The root .gitignore's plain patterns (outside a git checkout): anchored `/x`, directory `x/`, globs."""
    parts = rel.split("/")
    for pattern in patterns:
        anchored = pattern.startswith("/") or "/" in pattern.rstrip("/")
        pat = pattern.strip("/")
        if anchored:
            if any(fnmatch.fnmatch("/".join(parts[:i]), pat) for i in range(1, len(parts) + 1)):
                return True
        elif any(fnmatch.fnmatch(part, pat) for part in (parts[:-1] if pattern.endswith("/") else parts)):
            return True
    return False


def _walk_files(root: Path) -> list[str]:
    patterns = _ignore_patterns(root)
    out = []
    base = str(root)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = [d for d in dirnames if d not in sandbox.SKIP]
        rel_dir = os.path.relpath(dirpath, base)
        for name in filenames:
            rel = name if rel_dir == "." else f"{rel_dir}/{name}".replace(os.sep, "/")
            if not _ignored(rel, patterns):
                out.append(rel)
    return sorted(out)


def ownerships(project: Project) -> tuple[list[FileOwnership], int]:
    """Every file's ownership (and the number of files read; the rest came from the cache)."""
    root = project.root
    listed = _git_files(root)
    if listed is not None and "framework.yaml" not in listed:
        listed = None  # the project sits in a directory its enclosing checkout ignores: git lists nothing of it
    files = [f for f in (listed if listed is not None else _walk_files(root)) if not _skipped(f)]
    disowned = record_files.paths(root, record_files.DISOWNED)
    born = record_files.paths(root, record_files.SCAFFOLDED)
    recorded = set(record_files.state_files(root))
    cache = HashCache(root)
    out: list[FileOwnership] = []
    present: set[str] = set()
    base = str(root) + os.sep
    for rel in files:
        try:
            st = os.stat(base + rel)
        except OSError:
            continue  # tracked by git, deleted in the worktree
        if not stat.S_ISREG(st.st_mode):
            continue
        present.add(rel)
        state, sha = cache.state(rel, st.st_size, st.st_mtime_ns)
        if rel in disowned:
            kind = "disowned"
        elif rel in born:
            kind = "scaffold"
        elif rel in recorded or state != "missing":
            kind = "drifted" if state != "ok" else "generated"
        else:
            kind = "user"
        out.append(FileOwnership(path=rel, ownership=kind, present=True, sha256=sha))
    for rel in sorted(recorded - present - disowned - born):
        if not _skipped(rel):  # generated, then deleted: drifted, and shown so
            out.append(FileOwnership(path=rel, ownership="drifted", present=False))
    cache.save(present)
    out.sort(key=lambda f: f.path)
    return out, cache.reads


def parse_filter(value: str | None) -> tuple[set[str], list[str]]:
    """`--filter`: a comma-separated list of ownerships (user, generated, scaffold, drifted, disowned) or of
    globs over the path (`internal/*`, `*.go`); a word that is neither is refused (exit 2)."""
    if value is None:
        return set(), []
    kinds, globs = set(), []
    for item in (i.strip() for i in value.split(",")):
        if not item:
            continue
        if item in OWNERSHIPS:
            kinds.add(item)
        elif any(c in item for c in "*?[/.") or item.startswith("."):
            globs.append(item)
        else:
            raise UsageError(f"--filter {item!r}: not an ownership nor a glob",
                             hint=f"ownerships: {', '.join(OWNERSHIPS)}; or a glob such as 'internal/*' or '*.go'")
    if not kinds and not globs:
        raise UsageError("--filter is empty", hint=f"ownerships: {', '.join(OWNERSHIPS)}; or a glob")
    return kinds, globs


def _matches(f: FileOwnership, kinds: set[str], globs: list[str]) -> bool:
    if kinds and f.ownership not in kinds:
        return False
    if globs:
        name = f.path.rsplit("/", 1)[-1]
        return any(fnmatch.fnmatchcase(f.path, g) or ("/" not in g and fnmatch.fnmatchcase(name, g)) for g in globs)
    return True


def project_map(project: Project, depth: int | None = None, filter_: str | None = None) -> ProjectMap:
    if depth is not None and depth < 0:
        raise UsageError(f"--depth {depth}: a depth is 0 or more", hint="--depth 1 shows the top-level entries")
    kinds, globs = parse_filter(filter_)
    files, read = ownerships(project)
    chosen = [f for f in files if _matches(f, kinds, globs)]
    counts = dict.fromkeys(OWNERSHIPS, 0)
    dirs: dict[str, dict[str, int]] = {}
    for f in chosen:
        counts[f.ownership] += 1
        parts = f.path.split("/")
        for i in range(1, len(parts)):
            bucket = dirs.setdefault("/".join(parts[:i]), dict.fromkeys(OWNERSHIPS, 0))
            bucket[f.ownership] += 1
    nodes = [MapNode(path=d, name=d.rsplit("/", 1)[-1], kind="dir", depth=d.count("/") + 1,
                                     ownership=None, present=True, sha256=None,
                                     counts={k: n for k, n in c.items() if n}) for d, c in dirs.items()]
    nodes += [MapNode(path=f.path, name=f.path.rsplit("/", 1)[-1], kind="file",
                                      depth=f.path.count("/") + 1, ownership=f.ownership, present=f.present,
                                      sha256=f.sha256, counts={}) for f in chosen]
    if depth is not None:
        nodes = [n for n in nodes if n.depth <= depth]
    # Pre-order, directories before files at each level, names sorted: the order the text tree prints.
    nodes.sort(key=lambda n: [(0 if i < n.depth - 1 or n.kind == "dir" else 1, part)
                              for i, part in enumerate(n.path.split("/"))])
    return ProjectMap(root=str(project.root), files=len(chosen), counts=counts, depth=depth,
                      filter=sorted(kinds) + globs, nodes=nodes, read=read)
