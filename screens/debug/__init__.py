"""The Debug screen: a keyboard front-end to the same session broker as `framework debug`
(docs/reference-debug.md#the-debug-screen)."""
