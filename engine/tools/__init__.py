"""Agent tools (docs/reference-tools.md): the registry, one module per tool family, the filter and MCP servers.

Kept light on purpose: import `engine.tools.registry` (or a family module) where it is needed.
"""
