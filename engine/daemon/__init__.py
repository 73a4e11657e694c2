"""Local daemon instances (docs/reference-daemon.md#platform-daemon). Only the reader of instance directories is in
this build."""
