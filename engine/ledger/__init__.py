"""The promotion ledger (docs/reference-deploy.md#files): `protocol` (PromotionLedger, `open_ledger`),
`store` (the machine ledger: promotions, applies, gates, local sessions), `hosted` (the control
plane's ledger, through engine.cloud), `transfer` (`ledger show|where|export|import`), `bound`."""
