"""The machine ledger (docs/reference-deploy.md#files): promotions, applies, gates, local sessions."""
