"""`framework registry login|ref` (spec 2, framework gate, ledger, release, registry)."""
