"""Project inspection (docs/reference-project.md): one module per command or responsibility."""
