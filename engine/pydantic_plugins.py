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
