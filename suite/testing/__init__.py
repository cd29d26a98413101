"""Conformance kit for technique authors (see docs/plugin-authors.md)."""
