"""Environments (spec 2, framework env): declared, evaluated, configured, diffed, created, shaped."""
