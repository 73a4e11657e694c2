"""Devstacks screens."""
