"""`platform server`: the hosted side (Starlette on uvicorn): webhook ingestion, automations, runs."""
