"""Benchmark harnesses: measured figures for the engine and the services."""
