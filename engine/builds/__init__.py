"""`env build`: dispatch on build type (spec 2, framework env)."""
