"""Names and one-line help of every command group and command, with no imports.

This table is the single source of the command tree's names and summaries: the Typer apps in
`app/cli` take their help from it, and `app.main` prints plain `--help` from it without
importing Typer (keeps `framework --help` off the ~100 ms Typer import). A test checks that it
and the Typer apps agree, so a command cannot be listed without existing, or the reverse.
"""

from __future__ import annotations

from typing import NamedTuple


class Group(NamedTuple):
    help: str
    commands: dict[str, str]
    examples: tuple[str, ...] = ()


class Program(NamedTuple):
    help: str
    groups: dict[str, Group]
    examples: tuple[str, ...] = ()


FRAMEWORK = Program(
    help="Build, release, deploy and run the environments of a framework project.",
    groups={
        "login": Group(
            help="Sign in to every control plane the environments declare (browser, PKCE), or --endpoint / --token.",
            commands={},
            examples=("framework login", "framework login --endpoint https://cp.example.com",
                      "framework login --token \"$DEPLOY_TOKEN\""),
        ),
        "logout": Group(
            help="Forget the stored credentials of the project's control plane(s).",
            commands={},
            examples=("framework logout", "framework logout --endpoint https://cp.example.com"),
        ),
        "cloud": Group(
            help="The control plane of an environment: endpoint and credential, organization automation tokens.",
            commands={
                "status": "Show an environment's control-plane endpoint and credential source (no network call).",
                "releases": "List your organization's releases on an environment's control plane.",
                "token": "Organization automation tokens: token create --env --name --scopes, list, revoke.",
            },
            examples=("framework cloud status cloud",
                      "framework cloud token create --env cloud --name ci --scopes deploy:read,deploy:write"),
        ),
        "cluster": Group(
            help="Local clusters (k3d, or kwok's simulated nodes) for the project's environments.",
            commands={
                "up": "Create the local cluster from deploy/k3d.yaml, --config or an environment's KCL (no-op if up).",
                "down": "Delete the local cluster, everything on it, and its kubeconfig context.",
                "reset": "Delete the local cluster and create it again.",
                "info": "Show the declared cluster configuration (no cluster contact).",
                "status": "Show the cluster's provider, components, nodes and readiness.",
                "urls": "List the ingress URLs on the cluster (a notice when ingress is disabled).",
                "logs": "Print the logs of the cluster's workloads (--service, --tail, --no-follow).",
                "reload": "Re-render an environment's KCL, apply it to the cluster and wait its rollout.",
                "instances": "List the managed dev namespaces on the cluster.",
                "connect": "Record a cluster on --env's control plane with a deploy credential (re-run updates it).",
                "disconnect": "Revoke a connected cluster's credential, delete what connect created, forget it.",
            },
            examples=("framework cluster up", "framework cluster up cluster --wait", "framework cluster status --json",
                      "framework cluster logs --service api --tail 20 --no-follow", "framework cluster down"),
        ),
        "domain": Group(
            help="Hostnames your organization claims on a control plane: DNS verification and bindings.",
            commands={
                "add": "Claim a hostname and print the DNS records to publish (apex and www are separate).",
                "ls": "List every domain of your organization: state, binding, serving.",
                "show": "Show one domain: state, binding, DNS to publish, last verification.",
                "verify": "Check the domain's DNS now (not yet verified is not a failure).",
                "bind": "Bind a domain to --env's --target workload or frontend, or --redirect-to a hostname (308).",
                "unbind": "Remove a domain's binding; the domain and its verification stay.",
                "rm": "Remove a domain: its binding goes and the hostname is freed for others.",
            },
            examples=("framework domain add example.com --env cloud",
                      "framework domain bind example.com --env cloud --target api",
                      "framework domain bind www.example.com --env cloud --redirect-to example.com"),
        ),
        "env": Group(
            help="Environments declared in deploy/kcl/<env>/main.k.",
            commands={
                "list": "List the environments declared under deploy/kcl/ (kind, target, workloads).",
                "options": "List an environment's render options (name, type, default, help).",
                "render": "Render an environment: YAML stream with # cluster: comments, or the object list.",
                "shape": "Print an environment's declared shape: objects and hashes, no secret values.",
                "diff": "Compare rendered object hashes against the last recorded bundle (read-only).",
                "config": "Show each workload's resolved environment variables (secret values never shown).",
                "smoke": "Probe every ingress route (through the gateway, or on its ports): PASS, WARN, FAIL.",
                "new": "Create deploy/kcl/<name>/main.k (--from, --bind), or --check one for placeholders.",
                "build": "Build an environment's workloads; --push stores artifacts; --release cuts a release.",
                "deploy": "Promote a release to an environment, apply it and wait for health.",
                "status": "Bound release, verify state per image, rollout phase, health, gates, sessions.",
                "up": "Run a local environment as a dev stack: build, deploy, host, frontend.",
                "down": "Stop dev stacks: only processes carrying the framework's ownership markers.",
                "ps": "List the dev stacks on this machine, across projects.",
                "devstack": "Port blocks of dev stacks: port, key, list, prune, release.",
                "secrets": "Cluster Secrets from the dotenv provider: sync <env> (local clusters only).",
                "start": "Resume a stopped hosted environment (refused when the organization is not entitled).",
                "stop": "Suspend a hosted environment: never refused; data kept; --target one workload.",
                "delete": "Delete a hosted environment (type its name, or --yes); a later deploy creates a new one.",
            },
            examples=("framework env list", "framework env render cluster --list", "framework env shape prod --json",
                      "framework env deploy dev --yes", "framework env status dev --json"),
        ),
        "kcl": Group(
            help="Evaluate KCL files with the framework package.",
            commands={
                "eval": "Evaluate a KCL file; -S selects dotted paths, -D sets options.",
            },
            examples=("framework kcl eval deploy/kcl/dev/main.k -S environment.name --format raw",),
        ),
        "ci": Group(
            help="Checks for CI pipelines.",
            commands={
                "validate-kcl": "Check that every environment renders deployable manifests.",
                "migration-safety": "Check SQL migrations for patterns that fail or lock populated databases.",
                "run": "Timeline of one CI run: release cut, promotions, rollouts, gate checks (exit 5 while running).",
                "summarize": "Render --json documents as GitHub-flavoured Markdown (appended to $GITHUB_STEP_SUMMARY).",
                "vuln-scan": "Run the scanners framework.yaml configures (pip-audit, govulncheck, npm audit).",
                "verify-test-run": "Check a `go test -json` stream: failures, zero-evidence and mass-skip rules.",
            },
            examples=("framework ci validate-kcl --json", "framework ci run 9876543210.1 --json"),
        ),
        "release": Group(
            help="Immutable releases recorded in .framework/releases/<version>.json.",
            commands={
                "list": "List the releases cut in this checkout, newest first (version, commit, workloads).",
                "where": "Show the environments a release is bound to (exit 1 when unbound or never cut).",
                "verify": "Check every artifact of a release against its registry (file: UNVERIFIABLE).",
            },
            examples=("framework release where v1.2.0", "framework release verify v1.2.0 --strict --json"),
        ),
        "ledger": Group(
            help="The promotion ledger: machine ledger records, where it lives, export, import and metrics.",
            commands={
                "show": "Machine ledger records: promotions, applies and local sessions.",
                "where": "Which backend holds an environment's ledger and the declaration that chose it.",
                "export": "Write each environment's promotions to <dir>/<env>.jsonl (a verification aid).",
                "import": "Import promotions from git history or a file ledger (dry run unless --apply).",
                "timeline": "A rollout's timeline: each workload's phases against time, from the phase records.",
                "metrics": "Delivery metrics from the ledger: deploy frequency, lead time, failure rate, restore time.",
            },
            examples=("framework ledger show dev", "framework ledger import --from-git --rev origin/main --apply",
                      "framework ledger metrics prod --since 2026-11-01 --bucket week"),
        ),
        "gate": Group(
            help="Check evidence (gates) recorded against promotions.",
            commands={
                "record": "Record a gate against an environment's current promotion (append-only, idempotent).",
                "list": "List gates (every environment's without env): promote-time first, then oldest first.",
            },
            examples=("framework gate record dev --name smoke --status passed",
                      "framework gate list dev --json"),
        ),
        "debug": Group(
            help="Debugging sessions over the Debug Adapter Protocol (debugpy, delve): one session per project.",
            commands={
                "start": "Start a workload of the local environment or a program under its debugger (--attach <pid>).",
                "status": "Show the session: target, state, where it stopped, the target's output tail.",
                "break": "Set a breakpoint at <file:line> or a function (--func, --cond).",
                "breakpoints": "List the session's breakpoints, verified or not.",
                "clear": "Remove a breakpoint by id.",
                "continue": "Resume and wait until the target stops again (or --timeout).",
                "step": "Step over one line and report where the target stopped.",
                "step-in": "Step into the call on this line and report where the target stopped.",
                "step-out": "Run until the current function returns and report where the target stopped.",
                "eval": "Evaluate an expression in the stopped frame.",
                "args": "The arguments of the stopped frame.",
                "locals": "The local variables of the stopped frame.",
                "stack": "The call stack of the stopped thread or goroutine.",
                "goroutines": "Threads (Python) or goroutines (Go) of the target.",
                "stop": "End the session: kill what it launched, detach from what it attached to.",
            },
            examples=("framework debug start api", "framework debug break services/api/main.py:12 --cond \"n > 3\"",
                      "framework debug continue", "framework debug stop"),
        ),
    },
    examples=("framework env list", "framework env list --json", "framework   (on a terminal: the dashboard)"),
)

# `framework registry ...`: container registries of an environment's images (docs/reference-ci.md#commands).
FRAMEWORK.groups["registry"] = Group(
    help="Container registries the environment's images name: log in (docker's config.json), print pushed refs.",
    commands={
        "login": "Log in to every registry host the workloads' images name (stored where docker and oras look).",
        "ref": "Print <image>@<digest> per pushed image; --ci-output appends ref=, image=, digest= to $GITHUB_OUTPUT.",
    },
    examples=("framework registry login staging --username ci --password-env REGISTRY_TOKEN",
              "framework registry ref staging --image api --ci-output"),
)
# `framework doctor`: can this machine and project do what the project declares (docs/reference-ci.md#commands).
FRAMEWORK.groups["doctor"] = Group(
    help="Check this machine and project: toolchains, KCL, ledger, credentials, port blocks, server, daemon.",
    commands={
        "parity": "Compare a service's env and config in host mode (dev stack) and cluster mode (K8sCluster render).",
    },
    examples=("framework doctor", "framework doctor --signal deploy --json", "framework doctor --verbose",
              "framework doctor parity api --env dev"),
)
# `framework db ...`: the project's database authoring (docs/reference-db.md); sub-groups below.
FRAMEWORK.groups["db"] = Group(
    help="The project's database: forward-only migrations (golang-migrate compatible), seeds, introspection.",
    commands={
        "migrate": "Apply and inspect migrations: up, status, version, force.",
        "migration": "Author migration files: new (fresh UTC version), rebase (re-version pending files).",
        "seed": "Dev seeds: apply (deterministic, idempotent, FK-ordered), reset, status.",
        "reset": "Drop, recreate, migrate and seed the dev environment's own database (confirm or --yes).",
        "introspect": "Show tables, columns, types, constraints, indexes and foreign keys (--format json).",
        "squash": "Collapse --from-dir's migrations into one verified baseline .up.sql in an output directory.",
    },
    examples=("framework db migrate up", "framework db migration new add_users",
              "framework db migrate status --json"),
)
# `framework project ...`: project inspection and upgrade; here only `migrate import`
# (docs/reference-db.md#project-migrate-import---from-goose).
FRAMEWORK.groups["project"] = Group(
    help="The project itself: import migrations from other tools.",
    commands={
        "migrate": "Move code onto the framework: import --from goose (migrations), tdd (handler tests).",
    },
    examples=("framework project migrate import --from goose --src-dir old/migrations --dest-dir db/migrations",),
)
# Project authoring: new, generate, build, scaffold, api curl (docs/reference-authoring.md#commands).
FRAMEWORK.groups["project"].commands.update({
    "new": "Create a project: framework.yaml, protos, migrations, deploy/kcl/dev, README; then generate.",
    "introspect": "Inspect the project's protos: introspect handlers (/<package>.<Service>/<Method>, sorted).",
    "scaffolded": "List scaffold-once files (.framework/scaffolded.json); --absent: only deleted ones.",
    "rescaffold": "Re-create deleted scaffold-once files; refuses a path that still exists.",
    "disown": "Move generated files out of generation for good (--reason required; .framework/disowned.json).",
})
# Project inspection: what the framework knows and what the project is made of (docs/reference-project.md).
FRAMEWORK.groups["project"].commands.update({
    "annotations": "The marker and proto-option specification lint's analyzers read (--kind entity, column, go...).",
    "capabilities": "Every command, lint analyzer and marker, generated from the command trees and the tables.",
    "features": "The resolved feature graph: enabled, disabled, what needs what, what each makes.",
    "libraries": "The runtime libraries the generated code uses; with names (or all), their signatures.",
    "checkouts": "The default branch's remote and every worktree: branch, head, dirty, ahead/behind; --tree.",
    "map": "The ownership tree: user, generated, scaffold, drifted, disowned per file (--depth, --filter).",
    "audit": "Drift, orphaned handlers, migrations vs entities, disowned files, version pin, lint (exit 1: errors).",
})
FRAMEWORK.groups["project"] = FRAMEWORK.groups["project"]._replace(
    help="The project itself: create it, inspect its protos and ownership records, import migrations.",
    examples=("framework project new shop --mod example.com/shop", "framework project introspect handlers",
              "framework project scaffolded --absent", "framework project disown gen/x.go --reason 'hand-tuned'"))
# `framework project upgrade ...` (docs/reference-project.md#project-upgrade).
FRAMEWORK.groups["project"].commands["upgrade"] = (
    "Regenerate with a release's templates (--to, --check [path], --force path): merges edits, moves the pin.")
PROJECT_UPGRADE = Group(
    help="Regenerate the project's generated files with a framework release's templates and move "
         "framework_version; a hand-edited generated file is merged three ways, conflicts marked.",
    commands={
        "list": "List the pending migration playbooks of the pinned -> target releases.",
        "apply": "Record a migration playbook as applied (.framework/migrations.json).",
    },
    examples=("framework project upgrade --check", "framework project upgrade --check internal/bootstrap/bootstrap.go",
              "framework project upgrade", "framework project upgrade --force .github/workflows/ci.yml",
              "framework project upgrade list", "framework project upgrade apply 0.1.0-ci-vet"),
)
PROJECT_INTROSPECT = Group(
    help="Inspect the project's protos (compiled with buf).",
    commands={"handlers": "Print /<package>.<Service>/<Method> per RPC, sorted (--format json, --proto-dir)."},
    examples=("framework project introspect handlers", "framework project introspect handlers --format json"),
)
FRAMEWORK.groups["generate"] = Group(
    help="Generate Go protobuf and Connect code, handler stubs, entity code, bootstrap wiring and frontend "
         "clients (idempotent).",
    commands={},
    examples=("framework generate", "framework generate --dry-run", "framework generate --json"),
)
FRAMEWORK.groups["build"] = Group(
    help="Compile the project's binaries and frontends locally (go, docker, shell; next, vite, expo) or an "
         "environment's; no publishing.",
    commands={},
    examples=("framework build", "framework build dev", "framework build --json"),
)
FRAMEWORK.groups["lint"] = Group(
    help="Lint the project: go vet, golangci-lint, buf lint, eslint, tsc and the twenty analyzers (flags select).",
    commands={},
    examples=("framework lint", "framework lint --time-bucketing --scope internal/handlers/order",
              "framework lint --format sarif > lint.sarif", "framework lint --gate-json lint-gate.json --quiet"),
)
FRAMEWORK.groups["scaffold"] = Group(
    help="Scaffold: with no noun, birth every framework:entity message with no table, then generate.",
    commands={
        "entity": "An entity: framework:entity message, CRUD quintet (once), owned create-table migration.",
        "service": "Services (one generation run for the batch); --resume or --force, not both.",
        "rpc": "A handler stub for one RPC (pb-through when in the proto, else stub + proto snippet).",
        "handler-file": "An extra file in a service's handler directory (yours from birth).",
        "binary": "A binary: cmd/<name>/main.go and an entry under `binaries` in framework.yaml.",
        "frontend": "A frontend (web: Next.js, vite-spa, mobile: Expo): pinned packages, npm ci, typed clients.",
        "operator": "A Kubernetes operator (controller-runtime): manager, API group-version, optional first CRD.",
        "crd": "A CRD kind on an existing operator: types, reconciler shim and its envtest test.",
        "scenario": "An end-to-end scenario: a Playwright test driving a frontend in Chromium (--from, --frontend).",
    },
    examples=("framework scaffold --dry-run", "framework scaffold entity order --from-proto shop",
              "framework scaffold service billing audit", "framework scaffold rpc shop Refund --stream server"),
)
# `framework component ...`: shadcn-style components for a frontend (docs/reference-frontends.md#components).
FRAMEWORK.groups["component"] = Group(
    help="Components from a registry in the shadcn schema, installed as source into a frontend.",
    commands={
        "list": "List the registry's components (default registry, or --registry <dir or URL>).",
        "search": "Find components whose name, title or description hold every word of a query.",
        "install": "Install components and their registry dependencies into a frontend's src/components/ui/.",
    },
    examples=("framework component list", "framework component search dialog",
              "framework component install button dialog --frontend web"),
)
# Workers, webhooks, packages, adapters, libraries (docs/reference-authoring.md#workers-and-webhooks).
FRAMEWORK.groups["scaffold"].commands.update({
    "worker": "A worker: a long-running process under the service bootstrap, a workload of env up dev.",
    "webhook": "An inbound webhook on a service: HMAC in a sender's format, de-duplication, your handler.",
    "package": "An internal package: contract.go + service.go (--type service|adapter, --kind eventbus).",
    "adapter": "An adapter package: its contract implemented over an outside system (package --type adapter).",
    "library": "A library: plain Go with no contract (--path, --no-exclude, --force).",
})
FRAMEWORK.groups["package"] = Group(
    help="Internal packages: a contract (Go interface) its consumers depend on, and its implementation.",
    commands={"new": "An internal package: contract.go + service.go (--type service|adapter, --kind eventbus)."},
    examples=("framework package new pricing", "framework package new bus --kind eventbus"),
)
FRAMEWORK.groups["api"] = Group(
    help="Local request helpers for the project's Connect RPCs.",
    commands={"curl": "Print (never run) a curl command for <service.method>: POST, JSON, zero-value body."},
    examples=("framework api curl shop.v1.ShopService.Ping", "framework api curl ShopService.Ping --port 9000"),
)
FRAMEWORK.groups["completion"] = Group(
    help="Print the shell completion script of framework for bash, zsh or fish (README: shell completion).",
    commands={},
    examples=("framework completion bash > ~/.local/share/bash-completion/completions/framework",
              "framework completion zsh > \"${fpath[1]}/_framework\"",
              "framework completion fish > ~/.config/fish/completions/framework.fish"),
)
FRAMEWORK.groups["ci"].commands["verify-generated"] = (
    "Check generated files: hash markers, freshness after regeneration, commit policy; names each offender.")
# `project shapes`, `project graph`, `project delete service` (docs/reference-project.md).
FRAMEWORK.groups["project"].commands.update({
    "shapes": "RPCs, messages, enums, tables, handlers and hooks with file and line (--grep, --kind).",
    "graph": "The project's dependency graph as JSON: nodes, edges and a top-level warnings array (--env).",
    "delete": "Delete a part of the project: delete service <name> (handler scaffold out, types-only tombstone).",
})
PROJECT_DELETE = Group(
    help="Delete a part of the project (refused while the graph shows something depends on it).",
    commands={"service": "Remove a service's handler scaffold and framework.yaml entry; its proto keeps only types."},
    examples=("framework project delete service billing --dry-run", "framework project delete service billing"),
)
PROJECT_MIGRATE = Group(
    help="Move code onto the framework: migrations from other tools, hand-rolled handler tests onto the harness.",
    commands={
        "import": "Import goose migrations: Up kept, Down dropped, renumbered after the highest version.",
        "tdd": "Move hand-rolled handler tests onto the generated test harness (--dry-run: the diff; --path).",
    },
    examples=("framework project migrate import --from goose --src-dir old/migrations --dest-dir db/migrations",
              "framework project migrate tdd --dry-run"),
)
DB_MIGRATE = Group(
    help="Apply db/migrations/*.up.sql (--dsn or DATABASE_URL); golang-migrate's table, lock and dirty rule.",
    commands={
        "up": "Apply every pending migration, each in its own transaction; refuses on a dirty version.",
        "status": "Show the version, dirty flag and pending files (no migrating, no waiting).",
        "version": "Print the database's migration version (and whether it is dirty).",
        "force": "Record a version as applied without running SQL (repair the schema first).",
    },
    examples=("framework db migrate up", "framework db migrate status --json", "framework db migrate force none"),
)
DB_SEED = Group(
    help="Dev seed rows from the live schema, db/seeds/vocab.yaml and db/seeds/custom/*.sql (one transaction).",
    commands={
        "apply": "Insert the seed rows not seeded yet (a second apply inserts nothing); dev only.",
        "reset": "Delete the seeded rows child-first, then seed again; schema and user rows stay.",
        "status": "Per-table seeded-row counts (and all rows), custom seed files applied.",
    },
    examples=("framework db seed apply", "framework db seed status --json", "framework db seed reset --env dev"),
)
DB_MIGRATION = Group(
    help="Author migration files in db/migrations/.",
    commands={
        "new": "Create <UTC timestamp>_<name>.up.sql sorting after every version, with schema context.",
        "rebase": "Re-version files below the schema's current version (git mv); never default-branch files.",
    },
    examples=("framework db migration new add_users", "framework db migration rebase --all-pending"),
)

# `framework env devstack ...`: a sub-group of env (docs/reference-devstack.md#commands).
DEVSTACK = Group(
    help="Port blocks of dev stacks (.framework/blocks.json): 100 ports per worktree key.",
    commands={
        "port": "Print base + block*100 for this worktree (allocating its block if new).",
        "key": "Print this worktree's key (empty on the primary checkout).",
        "list": "List block holders: dev stack, derived port-block or standalone.",
        "prune": "Reclaim blocks of worktrees that no longer exist (never standalone or default keys).",
        "release": "Release one key's block (dry run unless --apply).",
    },
    examples=("framework env devstack port 8080", "framework env devstack list --json",
              "framework env devstack release feature-x --apply"),
)

# `framework env secrets ...`: a sub-group of env (docs/reference-k8s.md#env-secrets-sync-env).
ENV_SECRETS = Group(
    help="Cluster Secrets of a K8sCluster environment, rendered from its secret provider.",
    commands={
        "sync": "Apply the Secrets of deploy/secrets/<env>.env to a local cluster (values never shown).",
    },
    examples=("framework env secrets sync cluster", "framework env secrets sync cluster --json"),
)

PLATFORM = Program(
    help="The agent platform: the hosted server, webhook triggers, agent tools and the framework program.",
    groups={
        "framework": Group(
            help="Run the framework program (same output and exit codes as `framework`).",
            commands={},
            examples=("platform framework env list --json",),
        ),
        "server": Group(
            help="Run the hosted server: webhook ingestion, automations, runs, login (--host, --port, --data-dir).",
            commands={
                "user": "user add <email> --org <org> [--admin]: a user who can sign in (password hashed, argon2).",
                "org": "org add <name>; org grant <name> <permission>... [--remove]; org billing <name> --enable.",
            },
            examples=("platform server --port 8080", "platform server --port 0 --data-dir ./data",
                      "platform server org add acme", "platform server user add ada@example.com --org acme --admin"),
        ),
        "auth": Group(
            help="Sign in to a server (browser, OAuth + PKCE), API tokens, the control-plane credential.",
            commands={
                "login": "Sign in through the browser; the token is stored for that server (--server).",
                "logout": "Forget the stored login of the resolved server only (the token stays valid until revoked).",
                "status": "Show the credential that would be used and where the server came from (no network call).",
                "framework-credential": "Exchange the login for a control-plane token (deploy, secret, domain; <= 1h).",
                "token": "API tokens: token create --name (printed once), token list, token revoke <name-or-id>.",
                "serve": "Local HTTP server for third-party account OAuth callbacks (GET /health, POST /oauth/start).",
            },
            examples=("platform auth login --server http://127.0.0.1:8080", "platform auth status --json",
                      "platform auth token create --name ci"),
        ),
        "db": Group(
            help="The server database's embedded migrations (DATABASE_URL, DATABASE_DRIVER).",
            commands={
                "migrate": "migrate status: count applied, list missing (no migrating); "
                           "migrate up: apply pending (exit 0 when current).",
            },
            examples=("platform db migrate status", "platform db migrate up --json"),
        ),
        "automation": Group(
            help="Automations around a workflow, started by webhook triggers; their delivery history.",
            commands={
                "create": "Create an automation around a workflow file.",
                "list": "List automations with their triggers (state and URL; never tokens).",
                "history": "Deliveries to an automation's triggers and what each did.",
            },
            examples=("platform automation create triage --workflow triage.yaml",
                      "platform automation history triage --json"),
        ),
        "trigger": Group(
            help="Webhook triggers of an automation: add, activate, rotate, enable, disable, history, replay, stats.",
            commands={
                "add": "Add a webhook trigger (HMAC header, algorithm, prefix, encoding; CEL filter).",
                "activate": "Activate a trigger: shows its URL and token once (takes the HMAC secret).",
                "rotate": "Replace a trigger's token; the old token stops working at once.",
                "enable": "Enable a trigger (deliveries start runs).",
                "disable": "Disable a trigger (deliveries get 409).",
                "history": "Deliveries to one trigger and what each did (run, retry, filtered out, refused).",
                "replay": "Replay a recorded delivery as a new delivery and run (recorded in history).",
                "stats": "Deliveries per minute, answer latency (p50/p99), rejected and deduplicated counts.",
            },
            examples=("platform trigger add triage github --hmac-header X-Hub-Signature-256 --hmac-prefix sha256=",
                      "platform trigger activate triage github --hmac-secret-env GITHUB_SECRET",
                      "platform trigger history triage github"),
        ),
        "daemon": Group(
            help="The local tools daemon: shell, file, tool and terminal execution for the server over one stream.",
            commands={
                "register": "Sign in through the browser if needed; create and store (0600) a long-lived daemon token.",
                "start": "Run the daemon (foreground, or --background): dial the server's gateway and serve requests.",
                "status": "Process, whether the gateway stream is established, and binary; non-zero if not connected.",
                "stop": "Graceful signal and wait; --force kills at once; survives the grace: killed.",
                "logs": "The daemon's log: last 50 lines, then follow (--no-follow, -n).",
                "ls": "List instance directories: RUNNING from the lock, the runtime record's state separately.",
                "stats": "Transfer throughput and session count per minute, from the daemon's samples.",
            },
            examples=("platform daemon register --server http://127.0.0.1:8080",
                      "platform daemon start --root ~/src/app --background", "platform daemon status",
                      "platform daemon logs -n 100", "platform daemon stop", "platform daemon ls --json"),
        ),
        "tools": Group(
            help="The agent tools: list them, call one as an agent would, serve them over MCP.",
            commands={
                "list": "List available tools (built-in and tool-server) with tags; --filter applies a tool_filter.",
                "call": "Call one tool with a JSON parameter object and print the exact result the agent sees.",
                "serve": "Serve the built-in tools as an MCP server over stdio, for other agents.",
            },
            examples=("platform tools list", "platform tools list --filter tag:readonly --json",
                      "platform tools call view --params '{\"file_path\": \"README.md\"}'"),
        ),
        "run": Group(
            help="Run a workflow locally (platform run <workflow> [--input k=v ...]), streaming each tool call.",
            commands={},
            examples=("platform run workflow.yaml --input branch=main",),
        ),
        "completion": Group(
            help="Print the shell completion script of platform for bash, zsh or fish (README: shell completion).",
            commands={},
            examples=("platform completion bash > ~/.local/share/bash-completion/completions/platform",
                      "platform completion zsh > \"${fpath[1]}/_platform\"",
                      "platform completion fish > ~/.config/fish/completions/platform.fish"),
        ),
        "runs": Group(
            help="Recorded workflow runs: list them newest first, show one with its steps, plan and tasks.",
            commands={
                "list": "List recorded runs, newest first (paged: --limit, --before <next_before>).",
                "show": "Show one run: status, every tool call and result, its plan and tasks.",
            },
            examples=("platform runs list", "platform runs list --limit 20 --json", "platform runs show <run-id>"),
        ),
    },
    examples=("platform framework env list", "platform   (on a terminal: the dashboard)"),
)

DEBUG_COMMANDS = FRAMEWORK.groups["debug"].commands

PROGRAMS = {"framework": FRAMEWORK, "platform": PLATFORM}

def _table(rows: list[tuple[str, str]]) -> list[str]:
    width = max((len(name) for name, _ in rows), default=0) + 2
    return [f"  {name.ljust(width)}{text}" for name, text in rows]


def _options(key: str) -> list[str]:
    """The Options section: the generated table of the Typer command's own flags (one source)."""
    from app.help_options import OPTIONS

    return ["Options:"] + _table(list(OPTIONS[key]))


def plain_help(program: str, path: list[str]) -> str | None:
    """Plain-text help for a program (`path == []`) or one of its groups; None if unknown."""
    prog = PROGRAMS[program]
    if not path:
        lines = [f"Usage: {program} [OPTIONS] COMMAND [ARGS]...", "", f"  {prog.help}", "",
                 "  With no arguments on a terminal, opens the dashboard.", ""]
        lines += _options(program)
        lines += ["", "Commands:"] + _table([(name, g.help) for name, g in prog.groups.items()])
        if prog.examples:
            lines += ["", "Examples:"] + [f"  {ex}" for ex in prog.examples]
        return "\n".join(lines) + "\n"
    if len(path) == 1 and path[0] in prog.groups and prog.groups[path[0]].commands:
        group = prog.groups[path[0]]
        lines = [f"Usage: {program} {path[0]} [OPTIONS] COMMAND [ARGS]...", "", f"  {group.help}", ""]
        lines += _options(f"{program} {path[0]}")
        lines += ["", "Commands:"] + _table(list(group.commands.items()))
        if group.examples:
            lines += ["", "Examples:"] + [f"  {ex}" for ex in group.examples]
        return "\n".join(lines) + "\n"
    return None
