"""Collect every error of a config instead of stopping at the first: a check whose fields already failed is skipped, so
each mistake is reported once, in the order a user fixes them (``--set``, the gcloud flags, then by line)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, NoReturn

from cloudtrain.errors import ConfigError, ConfigErrors


class Problems:
    def __init__(self) -> None:
        self.errors: list[ConfigError] = []
        self._failed: list[str] = []  # dotted fields

    def add(self, error: ConfigError) -> None:
        for one in getattr(error, "errors", None) or (error,):
            self.errors.append(one)
            self._failed.append(one.field or "")

    def failed(self, *fields: str) -> bool:
        """Whether any of ``fields`` (dotted), a field inside one of them, or one around it, failed."""
        return any(_overlap(f, done) for f in fields for done in self._failed)

    def run(self, reads: Iterable[str], check: Callable[[], object]) -> None:
        """Run ``check`` unless a field it reads failed; collect the ConfigError(s) it raises."""
        if self.failed(*reads):
            return
        try:
            check()
        except ConfigError as exc:
            self.add(exc)

    def raise_any(self) -> None:
        if not self.errors:
            return
        ordered = sorted(self.errors, key=_order)
        raise ordered[0] if len(ordered) == 1 else ConfigErrors(ordered)

    def fail(self) -> NoReturn:
        """Raise what was collected: a step that cannot go on has added at least one error."""
        self.raise_any()
        raise ConfigError("the config cannot be read (no error was recorded: please report this)")


def _overlap(a: str, b: str) -> bool:
    if not a or not b:
        return False  # an error about no field (a malformed --set, --strict-legacy) holds no check back
    return a == b or a.startswith(b + ".") or b.startswith(a + ".") or a.startswith(b + "[") or b.startswith(a + "[")


def _order(error: ConfigError) -> tuple[int, int]:
    if error.file == "--set":
        return (0, 0)
    if error.line is None and error.file and error.file.startswith("--"):
        return (1, 0)  # a gcloud flag or another option
    return (2, error.line or 0)


def fill_cluster_keys(
    data: dict[str, Any], not_taken: dict[tuple[str, ...], str], title: str, region: str, machine_type: str
) -> list[tuple[tuple[str, ...], str, str]]:
    """A document for a backend whose cluster decides ``region`` and ``machine.type`` (Slurm, Kubernetes),
    before validation: both filled in, and one ``(path, message, hint)`` per key of ``not_taken`` written."""
    refused = []
    for path, hint in not_taken.items():
        node: Any = data
        for part in path[:-1]:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict) and path[-1] in node:
            refused.append((path, f"{'.'.join(path)} is not a {title} setting", hint))
    data["region"] = region
    machine = data.setdefault("machine", {})
    if isinstance(machine, dict):
        machine["type"] = machine_type
    return refused
