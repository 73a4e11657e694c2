"""Deploy plans, `env deploy` and `env status` (spec 2, Deploy and Status)."""
