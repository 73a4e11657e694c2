"""The daemon gateway inside `platform server` (the local tools daemon's bidirectional gRPC
stream, docs/reference-daemon.md#process-model): `service` (grpc.aio: authentication, Hello/Welcome,
heartbeats both ways),
`hub` (the streams this process holds and the requests in flight on them), `streams` (the
daemon_streams table: who holds which daemon, for routing across server processes), `routes`
(the HTTP API that issues requests to a daemon), `relay` (forwarding to the process that holds
the stream)."""
