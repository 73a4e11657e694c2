"""The control plane: hosted environments served by `platform server` (spec 2, hosted environments)."""
