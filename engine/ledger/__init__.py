"""The machine ledger (spec 2): promotions, applies, gates, local sessions."""
