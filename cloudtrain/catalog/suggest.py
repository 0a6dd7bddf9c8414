"""Did-you-mean: the known names closest to what was typed."""

from __future__ import annotations

from collections.abc import Iterable


def did_you_mean(word: str, candidates: Iterable[str], n: int = 3, cutoff: float = 0.6) -> list[str]:
    """Up to ``n`` candidates that look like ``word``, best first; case does not matter."""
    import difflib  # only on the error path

    by_lower: dict[str, str] = {}
    for name in candidates:
        by_lower.setdefault(name.lower(), name)
    close = difflib.get_close_matches(word.lower(), list(by_lower), n=n, cutoff=cutoff)
    return [by_lower[c] for c in close]


def version_key(version: str) -> tuple[int, ...]:
    """``"2.13.1"`` → ``(2, 13, 1)``; anything not numeric sorts first."""
    try:
        return tuple(int(part) for part in version.split("."))
    except ValueError:
        return ()


def nearest_versions(wanted: str, available: Iterable[str], n: int = 2) -> list[str]:
    """The available versions closest to ``wanted`` (by major.minor), newest first on ties."""
    want = version_key(wanted)[:2] or (0, 0)

    def distance(v: str) -> tuple[int, int, tuple[int, ...]]:
        have = version_key(v)[:2] or (0, 0)
        return abs(have[0] - want[0]), abs(have[1] - want[1]), tuple(-p for p in version_key(v))

    return sorted(available, key=distance)[:n]
