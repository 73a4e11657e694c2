"""`framework doctor` and `doctor parity` (docs/reference-ci.md#commands)."""
