"""Data files of the agent pipeline: the predicate vocabulary of its facts."""
