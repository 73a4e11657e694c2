"""The Project screen (docs/reference-project.md#project-screen)."""
