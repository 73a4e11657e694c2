"""Debugging sessions over the Debug Adapter Protocol (docs/reference-debug.md).

`dap` is the protocol client, `adapters` starts debugpy and delve, `broker` is the background
process that owns one adapter connection, `session` is what every `debug` command and the
Debug screen use to reach the broker through `.framework/debug-session.json`.
"""
