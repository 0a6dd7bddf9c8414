"""What the application layer has to tell a person, handed to whoever drives it (it never prints).

The CLI turns each notice into a line on stderr; the Python API keeps them on the object it returns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

Kind = Literal["warning", "fallback", "trial"]


@dataclass(frozen=True)
class Notice:
    kind: Kind  # warning: something to fix; fallback: moving between candidates; trial: a local sweep's trial
    text: str


Notify = Callable[[Notice], None]


def ignore(notice: Notice) -> None:
    """The default listener: notices are dropped."""
