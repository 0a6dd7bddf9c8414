"""Counts in words for messages: ``1 file``, ``2 files``, never "file(s)". A leaf module, so
the config translators can use it without importing the console (which imports the backends)."""

from __future__ import annotations


def counted(n: int, word: str, plural: str | None = None) -> str:
    """``1 replica``, ``2 replicas``, ``2 processes``: words, not "replica(s)"."""
    return f"{n} {word if n == 1 else plural or word + 's'}"
