"""CI helpers (spec 2, framework ci; spec 3, ci.test_skips.allow)."""
