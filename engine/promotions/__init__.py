"""The promotion ledger's rules, shared by the machine ledger and the hosted ledger
(docs/reference-hosted.md#design)."""
