"""The deploy's context check reads the kubeconfig's context names from the files, cached by their bytes
(engine.runtime.k8s, bench/k8s.py): the names kubectl would list, any edit read at once, an unusual
file left to kubectl (docs/reference-k8s.md#env-deploy-env-version-on-a-k8scluster)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.runtime.k8s import _contexts_from_files

CONFIG = """apiVersion: v1
kind: Config
contexts:
- name: {first}
  context: {{cluster: c, user: u}}
- name: k3d-demo
  context: {{cluster: c, user: u}}
"""


def test_context_names_follow_every_edit_of_the_kubeconfig(tmp_path: Path, isolated_home: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/reference-k8s.md#env-deploy-env-version-on-a-k8scluster (the declared context only): the
    names come from every file KUBECONFIG lists, from the cache when the bytes are unchanged, anew after
    an edit; a file of an unexpected shape is left to kubectl (None)."""
    one, two = tmp_path / "one", tmp_path / "two"
    one.write_text(CONFIG.format(first="remote-demo"))
    two.write_text("contexts:\n- name: kind-x\n  context: {}\n")
    monkeypatch.setenv("KUBECONFIG", f"{one}:{tmp_path / 'missing'}:{two}")
    assert _contexts_from_files() == ["k3d-demo", "kind-x", "remote-demo"]
    cache = isolated_home / ".cache" / "framework" / "kubeconfig-contexts"
    stored = sorted(cache.glob("*.json"))
    assert len(stored) == 2 and all("remote-demo" not in p.name for p in stored)
    assert _contexts_from_files() == ["k3d-demo", "kind-x", "remote-demo"]
    assert sorted(cache.glob("*.json")) == stored  # served from the cache
    one.write_text(CONFIG.format(first="staging"))
    assert _contexts_from_files() == ["k3d-demo", "kind-x", "staging"]
    two.write_text("contexts: {not: a list}\n")
    assert _contexts_from_files() is None
    two.write_bytes(b"contexts: [\xff]\n")  # not UTF-8
    assert _contexts_from_files() is None
