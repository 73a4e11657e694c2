"""Domains on the control plane (spec 2: domain record and binding, Domain states, framework domain;
issue 20): claims per organization, DNS verification, bindings, the serving gateway."""
