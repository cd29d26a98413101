"""pytest plugin registered under the ``pytest11`` entry point (fixtures for plugin authors)."""
