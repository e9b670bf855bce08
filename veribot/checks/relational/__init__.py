"""Equivalence relative to the calls a function makes (callees are opaque)."""
