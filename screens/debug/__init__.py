"""The Debug screen (issue 14): a keyboard front-end to the same session broker as `framework debug`."""
