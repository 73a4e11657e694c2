"""The control plane seen from the framework side (docs/reference-auth.md, `framework login`,
`logout`, `cloud`; docs/reference-domains.md#commands; docs/reference-hosted.md):

- `client`: ControlPlaneClient, the one client, with the credential precedence and its exit-2 errors;
- `account`: `framework login|logout`, `cloud status`, `cloud token ...`;
- `releases`: `cloud releases`;
- `domains`: `framework domain ...`.

The hosted ledger (engine.ledger.hosted) sends its requests through `client`. The server side of the
same API is engine.controlplane, engine.domains and engine.auth's routes (platform side).
"""
