"""The server's store: SQLite in the data dir by default, PostgreSQL when `DATABASE_URL` says so."""
