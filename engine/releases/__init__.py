"""Releases (spec 2): immutable, digest-pinned, stored in .framework/releases/<version>.json."""
