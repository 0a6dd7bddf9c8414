"""Offline checks of what only Vertex AI reads of a config: its project, its label rule."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_LABEL_KEY = re.compile(r"^[a-z][a-z0-9_-]{0,62}$")
_LABEL_VALUE = re.compile(r"^[a-z0-9_-]{0,63}$")

Check = tuple[tuple[str, ...], Callable[[], None]]


def settings_checks(loaded: Any) -> list[Check]:
    """When Vertex AI runs the job: the project it runs in."""
    cfg, err = loaded.config, loaded.error

    def project() -> None:
        if not cfg.project:
            raise err(("project",), "Vertex AI needs the Google Cloud project id", "add project: my-project")

    return [(("backend", "project"), project)]


def contract_checks(loaded: Any) -> list[Check]:
    """Wherever a job follows Vertex AI's contract: labels as Vertex takes them."""
    cfg, err = loaded.config, loaded.error

    def label(key: str, value: str) -> Callable[[], None]:
        def check() -> None:
            raise err(
                ("labels", key),
                f"received {key}: {value!r}; Vertex labels allow "
                "lowercase letters, digits, _ and -, at most 63, keys starting with a letter",
                "lowercase it",
            )

        return check

    return [
        ((f"labels.{key}",), label(key, value))
        for key, value in cfg.labels.items()
        if not _LABEL_KEY.match(key) or not _LABEL_VALUE.match(value)
    ]
