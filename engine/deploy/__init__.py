"""Deploy plans, `env deploy` and `env status` (docs/reference-deploy.md)."""
