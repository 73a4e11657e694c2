"""Webhooks screens."""
