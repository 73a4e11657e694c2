"""Seeds (`db seed apply|reset|status`, docs/reference-db.md#seeds): rows synthesized from the live schema and
`db/seeds/vocab.yaml`, plus `db/seeds/custom/*.sql`."""
