"""Deploys screens."""
