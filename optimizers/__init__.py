"""NAS algorithms, one module each, and their registry."""
