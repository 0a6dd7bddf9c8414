"""How messages say things, in one place: counts in words (``2 files``), an error's first line, long words cut, and
the one ``mapped: <key>: <from> → <to> (<reason>); $X.XX/h → $Y.YY/h`` line every translation writes (price part for
machines only; ``--strict-legacy`` makes each an error). Numbers are :mod:`.numbers`."""

from __future__ import annotations

from cloudtrain.text.numbers import money

#: The word in a value written for the user to fill in (``cloudtrain init``); validation refuses a value holding it.
FILL_IN = "FILL-IN"


def counted(n: int, word: str, plural: str | None = None) -> str:
    """``1 replica``, ``2 replicas``, ``2 processes``: words, not "replica(s)"."""
    return f"{n} {word if n == 1 else plural or word + 's'}"


def first_line(error: BaseException | str, limit: int | None = None) -> str:
    """The first non-blank line of an error's text (``limit`` characters at most), else its type's name."""
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


PREFIX = "mapped: "
NO_PRICE = "(no current price)"


def mapped_line(
    key: str, was: object, now: object, reason: str, prices: tuple[float | None, float | None] | None = None
) -> str:
    """``mapped: machine.type: a → b (why); $1.00/h → $2.00/h``; ``prices`` None: a mapping without a price."""
    line = f"{PREFIX}{key}: {was} → {now} ({reason})"
    if prices is not None:
        line += "; " + " → ".join(NO_PRICE if p is None else f"{money(p)}/h" for p in prices)
    return line
