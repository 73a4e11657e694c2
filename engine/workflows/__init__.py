"""Workflow definitions (spec 1, workflows): the file format shared by runs, automations and the workflow tool."""
