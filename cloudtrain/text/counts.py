"""Counts in words for messages: ``1 file``, ``2 files``, never "file(s)". A leaf module, so
the config translators can use it without importing the console (which imports the backends)."""

from __future__ import annotations

#: The word in a value written for the user to fill in (``cloudtrain init``); validation refuses a value holding it.
FILL_IN = "FILL-IN"


def counted(n: int, word: str, plural: str | None = None) -> str:
    """``1 replica``, ``2 replicas``, ``2 processes``: words, not "replica(s)"."""
    return f"{n} {word if n == 1 else plural or word + 's'}"


def first_line(error: BaseException | str, limit: int | None = None) -> str:
    """The first non-blank line of an error's text (at most ``limit`` characters), for one-line
    messages; the exception's type name when it has no text. The one such helper."""
    text = str(error).strip()
    if not text:
        return type(error).__name__ if isinstance(error, BaseException) else ""
    return text.splitlines()[0][:limit]


#: The longest run of characters without a space an error line shows whole (a path, a URL, a quoted value).
LONGEST_WORD = 300


def cut_long(text: str, limit: int = LONGEST_WORD) -> str:
    """``text`` with every run of more than ``limit`` characters between spaces cut in the middle,
    saying how long it was: a 100,000-character name refused stays a line a terminal can show."""
    if len(text) <= limit:
        return text
    words = text.split(" ")
    for i, word in enumerate(words):
        if len(word) > limit:
            keep = limit // 2
            words[i] = f"{word[:keep]}…[{len(word):,} characters]…{word[-20:]}"
    return " ".join(words)
