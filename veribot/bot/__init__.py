"""Delivery: the command line, git, GitHub and the terminal adapt the world to the engine."""
