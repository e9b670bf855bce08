"""Fixtures shared by the bot tests: the fake Anthropic Messages API server."""

from tests.fakes import fake_anthropic

__all__ = ["fake_anthropic"]
