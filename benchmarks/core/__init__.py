"""The shared core of every benchmark: tables, environment, regret, search-space protocol, catalog, registry."""
