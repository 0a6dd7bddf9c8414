"""Secrets by reference: the ``secrets:`` key, the launcher, and masking (docs/how-to/secrets.md)."""
