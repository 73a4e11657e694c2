"""Runtimes that apply a deploy: process (here), k8s and compose (real CLIs)."""
