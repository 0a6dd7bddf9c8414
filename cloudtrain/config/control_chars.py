"""No control character in a config string that can reach a script line, a command line or a file name.

A newline in ``slurm.workdir`` or the config file's name ended an ``#SBATCH`` line of the batch script and
ran the rest on the node. Values that travel as data (``env``, ``args``, ``hyperparameters``, ``secrets``:
JSON and argv, never script text) and ``slurm.setup`` (shell lines the user writes) keep theirs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from cloudtrain.config.loaded import LoadedConfig
from cloudtrain.errors import ConfigError

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_DATA = {("env",), ("args",), ("hyperparameters",), ("secrets",), ("fallback",), ("slurm", "setup")}


def check_control_characters(loaded: LoadedConfig) -> None:
    """One line naming the first field (or the file's name) that holds a control character."""
    if _CONTROL.search(loaded.file.name):
        raise ConfigError(
            f"the config file's name {loaded.file.name!r} holds a control character", hint="rename the file"
        )
    for path, text in _strings(loaded.config.model_dump(), ()):
        if _CONTROL.search(text):
            raise loaded.error(
                path, f"received {text!r}; a control character (newline, tab …) would end a script's line", "remove it"
            )


def _strings(value: Any, path: tuple[str | int, ...]) -> Iterator[tuple[tuple[str | int, ...], str]]:
    if path in _DATA:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*path, key), str(key)
            yield from _strings(item, (*path, key))
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _strings(item, (*path, i))
    elif isinstance(value, str) or hasattr(value, "__fspath__"):
        yield path, str(value)
