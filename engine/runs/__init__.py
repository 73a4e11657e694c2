"""Workflows and runs (spec 1: workflows run AI agents that call tools). Kept light on purpose."""
