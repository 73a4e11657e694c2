"""Evaluate KCL files with kcl-lib, caching results by the content hash of every input.

kcl-lib costs ~120 ms to import and tens of ms per evaluation; a cached result is one small
JSON read. The cache key covers the kcl-lib version, our KCL package, every `.k`/`kcl.mod` file
under the project's `deploy/kcl`, the evaluated file and the options, so any edit misses.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from engine.errors import KclError
from engine.paths import atomic_write_bytes, cache_dir, kcl_package_dir

# Pinned exactly in pyproject.toml; part of the cache key so an upgrade invalidates it.
KCL_LIB_VERSION = "0.13.2"
PACKAGE_NAME = "framework"

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_LOCATION = re.compile(r"-->\s+(?P<file>.+?):(?P<line>\d+)(?::(?P<col>\d+))?\s*$")
_GUTTER_MESSAGE = re.compile(r"^\s+\|\s*\^*\s+(?P<msg>\S.*)$")
_HEADER = re.compile(r"^(?:error\[\w+\]:\s*)?(?P<kind>[A-Z][A-Za-z]+)\s*$")


def _input_files(kcl_root: Path) -> Iterable[Path]:
    for root, dirs, files in os.walk(kcl_root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".k") or name == "kcl.mod":
                yield Path(root) / name


def cache_key(file: Path, kcl_root: Path, options: Mapping[str, str]) -> str:
    digest = hashlib.sha256()
    digest.update(f"kcl-lib {KCL_LIB_VERSION}\0{file.resolve()}\0".encode())
    for name, value in sorted(options.items()):
        digest.update(f"-D {name}={value}\0".encode())
    for root in (kcl_package_dir(), kcl_root):
        for path in _input_files(root):
            digest.update(str(path).encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    if kcl_root not in file.resolve().parents:
        digest.update(hashlib.sha256(file.read_bytes()).digest())
    return digest.hexdigest()


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def parse_kcl_error(raw: str, relative_to: Path | None = None) -> KclError:
    """Turn kcl-lib's rendered diagnostic into a KclError with file, line and message."""
    text = strip_ansi(raw).strip()
    file = line = column = None
    kind = None
    messages: list[str] = []
    for row in text.splitlines():
        if kind is None and (m := _HEADER.match(row.strip())):
            kind = m.group("kind")
        if file is None and (m := _LOCATION.search(row)):
            file, line = m.group("file"), int(m.group("line"))
            column = int(m.group("col")) if m.group("col") else None
        elif (m := _GUTTER_MESSAGE.match(row)) and m.group("msg") not in messages:
            messages.append(m.group("msg"))
    if file and relative_to is not None:
        try:
            file = str(Path(file).resolve().relative_to(relative_to.resolve()))
        except ValueError:
            pass
    detail = "; ".join(messages) or (text.splitlines()[0] if text else "KCL evaluation failed")
    where = f"{file}:{line}" + (f":{column}" if column else "") if file else ""
    message = ": ".join(part for part in (where, kind, detail) if part)
    return KclError(message, file=file, line=line, column=column)


def kcl_api() -> Any:
    """`kcl_lib.api`, with its package home redirected into our cache (nothing under $HOME)."""
    # kcl-lib creates $HOME/.kcl/kpm unless KCL_PKG_PATH names another directory.
    pkg_home = cache_dir() / "kcl-pkg"
    if os.environ.get("KCL_PKG_PATH") != str(pkg_home):
        pkg_home.mkdir(parents=True, exist_ok=True)
        os.environ["KCL_PKG_PATH"] = str(pkg_home)
    import kcl_lib.api as api

    return api


def external_pkgs() -> list[Any]:
    api = kcl_api()
    return [api.ExternalPkg(pkg_name=PACKAGE_NAME, pkg_path=str(kcl_package_dir()))]


def _exec(file: Path, work_dir: Path, options: Mapping[str, str], relative_to: Path | None) -> dict[str, Any]:
    api = kcl_api()
    args = api.ExecProgramArgs(
        k_filename_list=[str(file)],
        work_dir=str(work_dir),
        external_pkgs=external_pkgs(),
        args=[api.Argument(name=k, value=v) for k, v in options.items()],
    )
    # kcl-lib reports syntax and import errors by raising, evaluation errors in err_message.
    try:
        result = api.API().exec_program(args)
    except Exception as exc:  # noqa: BLE001 - kcl-lib raises bare Exception
        raise parse_kcl_error(str(exc), relative_to) from None
    if result.err_message:
        raise parse_kcl_error(result.err_message, relative_to)
    if not result.json_result:
        return {}
    data = json.loads(result.json_result)
    return data if isinstance(data, dict) else {"value": data}


_UNWATCHED = {".git", ".framework", ".venv", "__pycache__"}


def tree_snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """(mtime_ns, size) of every file under `root`, skipping VCS and tool state directories."""
    snap: dict[str, tuple[int, int]] = {}
    for base, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _UNWATCHED]
        for name in files:
            path = os.path.join(base, name)
            try:
                st = os.stat(path)
            except OSError:
                continue
            snap[os.path.relpath(path, root)] = (st.st_mtime_ns, st.st_size)
    return snap


def changed_files(before: Mapping[str, tuple[int, int]], after: Mapping[str, tuple[int, int]]) -> list[str]:
    return sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))


class Evaluation:
    """An evaluated document and the files the evaluation wrote under the watched tree; `key` is its
    cache key ("" when uncached or impure): a cache of what is derived from the document keys on it."""

    def __init__(self, data: dict[str, Any], wrote: list[str], cached: bool, key: str = "") -> None:
        self.data, self.wrote, self.cached, self.key = data, wrote, cached, key


def evaluate_tracked(
    file: Path,
    *,
    kcl_root: Path,
    options: Mapping[str, str] | None = None,
    relative_to: Path | None = None,
    use_cache: bool = True,
    watch: Path | None = None,
) -> Evaluation:
    """Evaluate one KCL file; `kcl_root` is the tree whose files can influence the result.

    With `watch`, a cold evaluation also reports the files it wrote under that tree (KCL's
    `file.write`); such an impure evaluation is never cached, so every render reports it again.
    """
    opts = dict(options or {})
    if not file.is_file():
        raise KclError(f"{file}: no such KCL file", file=str(file))
    key = cache_key(file, kcl_root, opts) if use_cache else ""
    entry = cache_dir() / "kcl" / f"{key}.json"
    if use_cache:
        try:
            return Evaluation(json.loads(entry.read_bytes()), [], True, key)
        except (OSError, ValueError):
            pass
    before = tree_snapshot(watch) if watch is not None else None
    data = _exec(file, file.parent, opts, relative_to)
    wrote = changed_files(before, tree_snapshot(watch)) if watch is not None and before is not None else []
    if use_cache and not wrote:
        try:
            atomic_write_bytes(entry, json.dumps(data, separators=(",", ":")).encode())
        except OSError:
            pass  # a read-only cache only costs speed
    return Evaluation(data, wrote, False, "" if wrote else key)


def evaluate(
    file: Path,
    *,
    kcl_root: Path,
    options: Mapping[str, str] | None = None,
    relative_to: Path | None = None,
    use_cache: bool = True,
) -> dict[str, Any]:
    """Evaluate one KCL file (see `evaluate_tracked`); the evaluated top-level document."""
    return evaluate_tracked(
        file, kcl_root=kcl_root, options=options, relative_to=relative_to, use_cache=use_cache
    ).data
