"""The control plane: hosted environments served by `platform server` (docs/reference-hosted.md)."""
