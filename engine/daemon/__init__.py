"""Local daemon instances (spec 2). Only the reader of instance directories is in this build."""
