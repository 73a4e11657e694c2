"""Where things live on this machine and in the installed distribution."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent


def assets_dir() -> Path:
    """The shipped assets (KCL package, stylesheets, templates)."""
    override = os.environ.get("FRAMEWORK_ASSETS_DIR")
    return Path(override) if override else _ROOT / "assets"


def kcl_package_dir() -> Path:
    """Our KCL package, passed to kcl-lib as the external package `framework`."""
    return assets_dir() / "kcl" / "framework"


def tools_bin() -> Path:
    """Pinned tools `make` installs into the checkout (.tools/bin): delve, goose, govulncheck, ..."""
    return _ROOT / ".tools" / "bin"


def pinned_tool(name: str, override_env: str | None = None) -> str | None:
    """A pinned tool the project drives (dlv, buf, govulncheck, ...), or None when absent: the path in
    `$<override_env>`, then `$FRAMEWORK_TOOLS_BIN`, then the checkout's `.tools/bin`, then PATH."""
    import shutil

    dirs = [os.environ.get("FRAMEWORK_TOOLS_BIN"), str(tools_bin())]
    candidates = [os.environ.get(override_env) if override_env else None]
    candidates += [str(Path(d) / name) for d in dirs if d] + [shutil.which(name)]
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def cache_dir() -> Path:
    """Per-user cache (`$XDG_CACHE_HOME/framework`, default `~/.cache/framework`)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "framework"


def cached_json(kind: str, key: bytes, compute: Callable[[], Any], *, keep: Callable[[Any], bool]) -> Any:
    """`compute()`, cached as JSON in `cache_dir()/kind/<sha256 of key>.json`: `key` must hold every
    input the value derives from (a file's bytes, the deriving code's `code_identity`). A cached value
    `keep` refuses (or an unreadable entry) is computed again; one `keep` refuses is not stored.
    Exceptions of `compute` propagate and are never cached."""
    import hashlib
    import json

    entry = cache_dir() / kind / f"{hashlib.sha256(key).hexdigest()}.json"
    try:
        cached = json.loads(entry.read_bytes())
    except (OSError, ValueError):
        cached = None
    if cached is not None and keep(cached):
        return cached
    value = compute()
    if keep(value):
        try:
            atomic_write_bytes(entry, json.dumps(value, separators=(",", ":")).encode(), 0o600, durable=False)
        except OSError:
            pass  # a read-only cache only costs speed
    return value


def code_identity(sources: tuple[Path, ...], packages: tuple[str, ...]) -> str:
    """A digest that changes when the code deriving a cached value changes: the bytes of `sources`
    and the identity (path, inode, size, mtime) of each installed package's `__init__` (a reinstall
    or upgrade replaces it), found without importing it. "" when a source cannot be read: then
    nothing derived by it is cached."""
    import hashlib
    from importlib.util import find_spec

    digest = hashlib.sha256()
    try:
        for source in sources:
            digest.update(f"{source}\0".encode() + source.read_bytes())
        for package in packages:
            spec = find_spec(package)
            origin = spec.origin if spec is not None else None
            if origin:
                st = os.stat(origin)
                digest.update(f"{origin}\0{st.st_ino}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    except (OSError, ImportError, ValueError):
        return ""
    return digest.hexdigest()


def ledger_home() -> Path:
    """Machine ledger root: `$FRAMEWORK_LEDGER_HOME`, default `~/.framework/ledger` (docs/reference-deploy.md#files)."""
    override = os.environ.get("FRAMEWORK_LEDGER_HOME")
    return Path(override) if override else Path.home() / ".framework" / "ledger"


def runtime_dir(project_key: str, env: str, root: Path | None = None) -> Path:
    """What a runtime keeps of one environment (instance records, logs, Compose files, the k8s render cache):
    under the machine ledger home, or under `root` (the control plane keeps its hosted environments' under its
    data dir)."""
    return (root or ledger_home()) / "projects" / project_key / "runtime" / env


def atomic_write_bytes(path: Path, data: bytes, mode: int = 0o644, *, durable: bool = True) -> None:
    """Write to a temp file beside `path`, fsync, then rename: readers see old or new, never half.
    `durable=False` skips the fsync (output that can be regenerated, e.g. generated code)."""
    tmp = write_beside(path, data, mode, durable=durable)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_beside(path: Path, data: bytes, mode: int = 0o644, *, durable: bool = True) -> Path:
    """`data` written (and fsynced) to a temp file beside `path`, not yet in its place: the first half
    of atomic_write_bytes, for a caller that renames it later (os.replace) or discards it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp
