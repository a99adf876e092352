"""Benchmarks: speed goals live here, with results in docs/benchmarks.md, never in tests."""
