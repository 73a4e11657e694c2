"""CI helpers (docs/reference-ci.md)."""
