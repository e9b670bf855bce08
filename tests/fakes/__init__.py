"""Test doubles for the real boundaries: GitHub REST, webhooks, the Anthropic API."""
