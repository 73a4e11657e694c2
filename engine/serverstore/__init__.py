"""The platform server's store (`platform server`, its control plane, its embedded migrations; not a
project's database, which is engine.database): SQLite in the data dir by default, PostgreSQL when
`DATABASE_URL` says so."""
