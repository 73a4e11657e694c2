"""The files of workers and inbound webhooks (docs/reference-authoring.md#workers-and-webhooks).

A worker `<name>` is a long-running process: `internal/workers/<name>/worker.go` (yours: `Run(ctx)`)
and its test, born once; `cmd/<name>/main.go` and `internal/bootstrap/worker.go` (health on env PORT,
shutdown on SIGTERM) generated from framework.yaml `workers`. A webhook `<name>` of a service:
`internal/webhooks/<name>/handle.go` (yours) born once; the receiver (HMAC verification in the
sender's format, de-duplication by delivery id) and its test generated from framework.yaml `webhooks`,
mounted by the bootstrap at `/webhooks/<service>/<name>`.
"""

from __future__ import annotations

import re
from pathlib import Path

from engine.authoring import naming
from engine.authoring.config import AuthoringConfig
from engine.authoring.plan import Plan
from engine.authoring.templates import render
from engine.errors import UsageError

WORKERS_DIR = "internal/workers"
WEBHOOKS_DIR = "internal/webhooks"
DEV_KCL = "deploy/kcl/dev/main.k"
# The vectors of the generated webhook test, signed by the platform's own signer.
TEST_SECRET = "framework-test-secret"
TEST_BODY = '{"action":"opened","delivery":1}'


def worker_plan(name: str) -> Plan:
    """The scaffold-once files of `scaffold worker <name>` (also what rescaffold re-creates)."""
    plan = Plan()
    where, gopkg = f"{WORKERS_DIR}/{name}", naming.go_package(name)
    plan.scaffold(f"{where}/worker.go", render("worker/worker.go.tmpl", gopkg=gopkg, name=name))
    plan.scaffold(f"{where}/worker_test.go", render("worker/worker_test.go.tmpl", gopkg=gopkg))
    return plan


def senders() -> list[str]:
    from engine.webhook_senders import SENDERS

    return sorted(SENDERS)


def check_sender(sender: str) -> str:
    if sender not in senders():
        raise UsageError(f"--sender {sender!r}: not a sender preset", hint=f"senders: {', '.join(senders())}")
    return sender


def webhook_route(service: str, name: str) -> str:
    return f"/webhooks/{service}/{name}"


def webhook_secret_env(name: str) -> str:
    return f"WEBHOOK_{name.upper()}_SECRET"


def webhook_plan(name: str) -> Plan:
    """The scaffold-once handler stub of `scaffold webhook <name>`."""
    plan = Plan()
    plan.scaffold(f"{WEBHOOKS_DIR}/{name}/handle.go",
                  render("webhook/handle.go.tmpl", gopkg=naming.go_package(name), name=name))
    return plan


def _webhook_values(hook: dict[str, object]) -> dict[str, str]:
    from engine.webhook_senders import DELIVERY_HEADERS, SENDERS

    name, service = str(hook["name"]), str(hook.get("service") or "")
    sender = str(hook.get("sender") or "generic")
    preset = SENDERS.get(sender, SENDERS["generic"])
    imports = ""
    if preset.algorithm != "sha256":
        imports += f'\t"crypto/{preset.algorithm}"\n'
    imports += '\t"encoding/hex"\n' if preset.encoding == "hex" else '\t"encoding/base64"\n'
    encode, decode = (("hex.EncodeToString", "hex.DecodeString") if preset.encoding == "hex" else
                      ("base64.StdEncoding.EncodeToString", "base64.StdEncoding.DecodeString"))
    headers = [preset.delivery_header, *(h for h in DELIVERY_HEADERS if h != preset.delivery_header)]
    return {"gopkg": naming.go_package(name), "name": name, "service": service, "sender": sender,
            "route": webhook_route(service, name), "algorithm": preset.algorithm.upper(), "header": preset.header,
            "prefix": preset.prefix, "encoding": preset.encoding, "secret_env": webhook_secret_env(name),
            "extra_imports": imports, "hash_new": f"{preset.algorithm}.New", "encode": encode, "decode": decode,
            "delivery_headers": ", ".join(f'"{h}"' for h in headers),
            "test_secret": TEST_SECRET, "test_body": TEST_BODY,
            "signed": preset.sign(TEST_SECRET.encode(), TEST_BODY.encode()),
            "forged": preset.sign(b"not-the-shared-secret", TEST_BODY.encode())}


def add_generated(plan: Plan, cfg: AuthoringConfig) -> None:
    """The generated half of the project's workers and webhooks (a service project's bootstrap)."""
    if cfg.workers:
        plan.generated("internal/bootstrap/worker.go", render("worker/bootstrap.go.tmpl"))
        plan.generated("internal/bootstrap/worker_test.go", render("worker/bootstrap_test.go.tmpl"))
    for worker in cfg.workers:
        name = str(worker["name"])
        plan.generated(f"cmd/{name}/main.go", render("worker/main.go.tmpl", name=name, module=cfg.module,
                                                     gopkg=naming.go_package(name)))
    for hook in cfg.webhooks:
        values = _webhook_values(hook)
        where = f"{WEBHOOKS_DIR}/{values['name']}"
        plan.generated(f"{where}/webhook.go", render("webhook/webhook.go.tmpl", **values), gofmt=True)
        plan.generated(f"{where}/webhook_test.go", render("webhook/webhook_test.go.tmpl", **values), gofmt=True)


def webhook_routes(cfg: AuthoringConfig) -> list[tuple[str, str, str]]:
    """(route, import path, package name) of each webhook the bootstrap mounts."""
    return [(webhook_route(str(h.get("service") or ""), str(h["name"])), f"{cfg.module}/{WEBHOOKS_DIR}/{h['name']}",
             naming.go_package(str(h["name"]))) for h in cfg.webhooks]


def dev_workload(name: str, port: int) -> str:
    return (f"        framework.Workload {{\n"
            f"            name = \"{name}\"\n"
            f"            build = framework.Build {{type = \"go\", main = \"./cmd/{name}\", "
            f"artifacts = [\"bin/{name}\"]}}\n"
            f"            run = [\"bin/{name}\"]\n"
            f"            ports = [framework.Port {{port = {port}}}]\n"
            f"            health = framework.HealthCheck {{path = \"/healthz\"}}\n"
            f"        }}\n")


def add_dev_workload(root: Path, name: str) -> str | None:
    """Declare the worker as a workload of the dev environment (`env up dev` runs it), on the port
    after the highest the file declares. Returns the block to add by hand when the file is not the
    shape `project new` writes (None when it was added)."""
    from engine.paths import atomic_write_bytes

    path = root / DEV_KCL
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    ports = [int(p) for p in re.findall(r"\bport\s*=\s*(\d+)", text)]
    block = dev_workload(name, max(ports, default=8080) + 1)
    start = re.search(r"^\s*workloads\s*=\s*\[", text, re.M)
    if start is None:
        return block
    depth, i = 1, start.end()
    while i < len(text) and depth:
        depth += {"[": 1, "]": -1}.get(text[i], 0)
        i += 1
    if depth:
        return block
    close = text.rfind("\n", 0, i - 1) + 1  # the line holding the closing bracket
    if text[close:i - 1].strip():
        return block
    atomic_write_bytes(path, (text[:close] + block + text[close:]).encode("utf-8"))
    return None
