"""What the application layer has to tell a person, handed to whoever drives it (it never prints)."""

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


class Detached(Exception):
    """Ctrl-C while following, without cancel: the job keeps running; ``reattach`` follows it again.
    ``just_created``: the Ctrl-C came while the job was being created (it is recorded all the same)."""

    def __init__(self, job_id: str, reattach: str, *, just_created: bool = False) -> None:
        super().__init__(f"detached from job {job_id}")
        self.job_id, self.reattach, self.just_created = job_id, reattach, just_created
