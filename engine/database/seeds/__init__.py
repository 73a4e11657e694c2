"""Seeds (spec 3, `db seed apply|reset|status`): rows synthesized from the live schema and
`db/seeds/vocab.yaml`, plus `db/seeds/custom/*.sql`."""
