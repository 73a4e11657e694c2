"""Project inspection (docs/reference-project.md): shapes, graph, delete service and the other `project` views."""
