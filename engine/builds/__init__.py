"""`env build`: dispatch on build type (docs/reference-deploy.md#commands)."""
