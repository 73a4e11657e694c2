"""`--config-reach` (docs/reference-lint.md#config-reach): the environment variables the Go code reads by a
constant name are set for some workload by some environment (deploy/kcl/<env>/main.k: its `env` keys, `secrets`
names, `PORT` of a workload with a port) or by the framework's runtime for every workload. The Go analyzer
`configreach` reports every such read; this keeps the reads of keys nothing sets."""

from __future__ import annotations

import re

from engine.lint.model import Finding
from engine.project import Project

NAME = "config-reach"
# What the framework's runtime sets for every workload it starts (docs/reference-lint.md#config-reach).
RUNTIME_KEYS = frozenset({"FRAMEWORK_OWNED_BY", "FRAMEWORK_INSTANCE", "FRAMEWORK_PROJECT", "FRAMEWORK_ENV",
                          "FRAMEWORK_WORKLOAD", "FRAMEWORK_RELEASE", "FRAMEWORK_DIGEST", "FRAMEWORK_PROMOTION"})
_KEY = re.compile(r'environment variable "(?P<key>[^"]*)"')


def delivered_keys(project: Project) -> set[str]:
    """Every key some environment's workload gets; an environment that does not evaluate raises its KclError."""
    from engine.environments.evaluate import environment_spec, evaluate_environment_result
    from engine.environments.files import declared_names

    keys = set(RUNTIME_KEYS)
    for name in declared_names(project):
        doc, _ = evaluate_environment_result(project, name)
        for w in environment_spec(project, name, doc).workloads:
            keys |= set(w.env) | set(w.secrets) | ({"PORT"} if w.ports else set())
    return keys


def unreached(findings: list[Finding], keys: set[str]) -> list[Finding]:
    """The analyzer's reads of keys nothing sets; every other finding as it is."""
    out = []
    for f in findings:
        m = _KEY.search(f.message) if f.analyzer == NAME else None
        if m and m["key"] in keys:
            continue
        if m:
            f = f.model_copy(update={"hint": f"set {m['key']} in a workload's env or secrets (deploy/kcl/<env>/main.k)"
                                             ", or stop reading it"})
        out.append(f)
    return out
