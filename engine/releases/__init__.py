"""Releases (docs/reference-deploy.md#files): immutable, digest-pinned, stored in .framework/releases/<version>.json;
`images` parses the image references of `oci` artifacts."""
