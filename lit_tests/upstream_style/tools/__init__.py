"""Helpers that lit_tests/upstream_style/ imports; lit collects nothing here (lit.local.cfg)."""
