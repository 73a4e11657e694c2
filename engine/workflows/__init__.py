"""Workflow definitions (docs/reference-tools.md#workflow-files): the file format shared by runs, automations and
the workflow tool."""
