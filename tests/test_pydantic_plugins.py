"""Pydantic's plugin discovery answered from a cache (engine/pydantic_plugins.py): a deploy imports no
`importlib.metadata` when no plugin is installed, and a plugin installed afterwards is found and loaded
(docs/reference-k8s.md#start-up-work-a-deploy-skips). Real interpreters, a real distribution on a
`sys.path` directory declaring a `pydantic` entry point."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROBE = """
import sys
from engine.pydantic_plugins import skip_plugin_discovery
skip_plugin_discovery()
from pydantic import BaseModel
class M(BaseModel):
    x: int
M(x=1)
print("metadata" if "importlib.metadata" in sys.modules else "no-metadata",
      "plugin" if "probe_plugin" in sys.modules else "no-plugin")
"""
PLUGIN = """
class Plugin:
    def new_schema_validator(self, schema, schema_type, schema_type_path, schema_kind, config, plugin_settings):
        return None, None, None
plugin = Plugin()
"""


def _probe(site: Path, cache: Path) -> list[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PYTHONPATH": os.pathsep.join((str(ROOT), str(site)))}
    env.pop("PYDANTIC_DISABLE_PLUGINS", None)
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=60,
                         check=True)
    return out.stdout.split()


def test_no_plugin_skips_discovery_and_a_new_plugin_is_loaded(tmp_path: Path) -> None:
    """docs/reference-k8s.md#start-up-work-a-deploy-skips: with no `pydantic` entry point installed, the
    first process (cold cache: the `entry_points.txt` files read directly) and the second (answered from
    the cache it filled) validate a model without importing importlib.metadata;
    a distribution declaring one, installed afterwards on a sys.path directory, changes that directory,
    so the next process reads the entry points again and pydantic loads the plugin."""
    site, cache = tmp_path / "site", tmp_path / "cache"
    site.mkdir()
    assert _probe(site, cache) == ["no-metadata", "no-plugin"]  # first: no entry_points.txt names pydantic
    assert _probe(site, cache) == ["no-metadata", "no-plugin"]  # then: answered from the cache
    (site / "probe_plugin.py").write_text(PLUGIN)
    dist = site / "probe_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: probe-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[pydantic]\nprobe = probe_plugin:plugin\n")
    assert _probe(site, cache) == ["metadata", "plugin"]
    assert _probe(site, cache) == ["metadata", "plugin"]  # a cached plugin keeps pydantic's own loader
