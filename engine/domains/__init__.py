"""Domains on the control plane (docs/reference-domains.md:
records, states, commands): claims per organization, DNS verification, bindings, the serving gateway."""
