"""The engine: pure analysis of code, no network, no GitHub, no environment reads."""
