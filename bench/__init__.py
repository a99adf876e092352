"""Benchmarks: speed goals live here, with results in the README, never in tests."""
