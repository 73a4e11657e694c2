"""Database authoring of a framework project (docs/reference-db.md): forward-only migrations,
seeds, reset, introspect, squash, goose import and migration safety.

Not the platform server's own store (that is `engine.serverstore`). Modules are imported by the
command that needs them; this package stays light.
"""
