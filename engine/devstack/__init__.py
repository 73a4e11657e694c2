"""Dev stacks (docs/reference-devstack.md).

Modules: `checkout` (worktree key), `blocks` (the port-block registry `.framework/blocks.json`),
`stacks` (the machine's stack registry, ownership markers, down/ps), `up` (phases), `hold`
(foreground status, watch). Kept light: import the module you need.
"""
