"""The promotion ledger's rules, shared by the machine ledger and the hosted ledger (spec 2, Records)."""
