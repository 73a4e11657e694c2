"""Workflows and runs (docs/reference-tools.md#runs: workflows run AI agents that call tools). Kept light on purpose."""
