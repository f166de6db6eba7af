"""Helpers the tests share: imported as `support.<module>` (pyproject.toml puts tests/ on sys.path)."""
