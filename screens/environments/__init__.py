"""Environments screens."""
