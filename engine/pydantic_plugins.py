"""Pydantic's plugin discovery, answered from a cache when no plugin is installed.

The first pydantic model a process validates makes pydantic look for plugins: it imports
`importlib.metadata` (with `email`, `zipfile`, `csv`) and reads the entry points of every installed
distribution, ~25 ms of CPU on the path of a short command such as `env deploy` (bench/k8s.py),
almost always to find none. `skip_plugin_discovery` answers that question from a cache keyed by
what decides it (each `sys.path` entry's identity: installing or removing a distribution, or a
`.pth` file, changes its directory) and, when the answer is "no plugin", gives pydantic a loader
that returns none, as its own loader would. With a plugin installed, or anything unusual,
pydantic's own loader runs.
"""

from __future__ import annotations

import os
import sys
import types

GROUP = "pydantic"  # the entry-point group pydantic reads (pydantic/plugin/_loader.py)
LOADER = "pydantic.plugin._loader"


def skip_plugin_discovery() -> None:
    """Before pydantic's first schema build: when the cache says no distribution declares a pydantic
    plugin, install a loader answering none; else leave pydantic's own loader to run."""
    if LOADER in sys.modules or os.environ.get("PYDANTIC_DISABLE_PLUGINS"):
        return  # already loaded, or the user chose which plugins run: pydantic decides
    key = _paths_identity()
    if key is None:
        return
    from engine.paths import cached_json

    found = cached_json("pydantic-plugins", key, _declared,
                        keep=lambda value: isinstance(value, list) and all(isinstance(v, str) for v in value))
    if found:
        return
    loader = types.ModuleType(LOADER)
    loader.get_plugins = lambda: ()  # type: ignore[attr-defined]
    sys.modules[LOADER] = loader


def _declared() -> list[str]:
    """The `pydantic` entry points installed distributions declare (`name = value`), as pydantic reads them."""
    if not _may_declare():
        return []
    from importlib.metadata import entry_points

    return sorted(f"{ep.name} = {ep.value}" for ep in entry_points(group=GROUP))


def _paths_identity() -> bytes | None:
    """Every `sys.path` entry with its inode and modification time (a missing one as such); None when
    one cannot be read: then nothing is cached."""
    parts = [sys.version]
    for entry in sys.path:
        try:
            st = os.stat(entry or ".")
        except FileNotFoundError:
            parts.append(f"{entry}\0-")
            continue
        except OSError:
            return None
        parts.append(f"{entry}\0{st.st_ino}\0{st.st_mtime_ns}")
    return "\n".join(parts).encode()


def _may_declare() -> bool:
    """Whether a distribution may declare a `pydantic` entry point, found without importing
    `importlib.metadata` (~25 ms, paid by the first command of every fresh cache): False only when
    the standard path finder is the only distribution finder and every `sys.path` entry is a
    directory (or missing) in which no `*.dist-info` / `*.egg-info` holds an `entry_points.txt`
    naming pydantic, where importlib.metadata looks. Anything else: True, and importlib.metadata
    answers."""
    from importlib.machinery import PathFinder

    if any(getattr(finder, "find_distributions", None) is not None and finder is not PathFinder
           for finder in sys.meta_path):
        return True
    for entry in sys.path:
        root = entry or "."
        try:
            children = os.listdir(root)
        except OSError:
            if os.path.lexists(root):
                return True  # a zip archive, or a directory not readable now: importlib.metadata decides
            continue
        egg = os.path.basename(root).lower().endswith(".egg")
        for child in children:
            low = child.lower()
            if not (low.endswith((".dist-info", ".egg-info")) or (egg and low == "egg-info")):
                continue
            try:
                with open(os.path.join(root, child, "entry_points.txt"), "rb") as f:
                    if b"pydantic" in f.read():
                        return True
            except (FileNotFoundError, NotADirectoryError):
                continue
            except OSError:
                return True
    return False
