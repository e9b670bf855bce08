"""Checkable hints: what an agent or a person proposes where the engine stopped.

``format`` reads hints (JSON, a safe subset of Python expressions, never run); ``model``
offers them to the engine, which uses a hint only once Z3 has proven it.
"""
