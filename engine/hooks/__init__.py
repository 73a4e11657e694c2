"""Webhook triggers (spec 1): automations, triggers, signatures, payloads, filters, history."""
