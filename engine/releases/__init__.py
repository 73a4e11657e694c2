"""Releases (docs/reference-deploy.md#files): immutable, digest-pinned, stored in .framework/releases/<version>.json."""
