"""Webhook triggers (docs/reference-webhooks.md): automations, triggers, signatures, payloads, filters, history."""
