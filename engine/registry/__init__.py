"""`framework registry login|ref` (docs/reference-ci.md#commands)."""
