"""`framework doctor` and `doctor parity` (spec 2, framework ci and doctor)."""
