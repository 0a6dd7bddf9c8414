"""The result of loading a config: the validated config and where each part of it came from; its own module so the
checks run while loading can take it without importing the loader."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cloudtrain.config.schema import JobConfig
from cloudtrain.config.yaml12 import LoadedYaml, Path_
from cloudtrain.errors import ConfigError
from cloudtrain.secrets.masking import masked_repr, secret_values


@dataclass(frozen=True, repr=False)  # its own __repr__ masks secrets: no generated one to compile
class LoadedConfig:
    config: JobConfig
    source: LoadedYaml
    #: One line per setting mapped to its nearest (retired GPUs, another cloud, old versions).
    notes: tuple[str, ...] = ()
    #: Where ``config.project`` came from (``--project``, ``job.yaml:3``, ``CLOUDSDK_CORE_PROJECT``, …).
    project_source: str | None = None
    #: The folder relative paths are read from; default: the config file's folder.
    base: Path | None = None
    #: The ``fallback:`` entries, each a whole validated config, in the order they are tried.
    candidates: tuple[LoadedConfig, ...] = ()

    def __repr__(self) -> str:  # its config and the YAML it was read from hold env: values
        cfg = self.config
        return masked_repr(self, secret_values(cfg.env, cfg.args, cfg.hyperparameters))

    @property
    def file(self) -> Path:
        return Path(self.source.file)

    @property
    def base_dir(self) -> Path:
        """Relative paths in the config (package.path) are relative to the config's folder."""
        return self.base.resolve() if self.base else self.file.resolve().parent

    def error(self, path: Path_, message: str, hint: str | None = None) -> ConfigError:
        return self.source.error(path, message, hint)


# --- no control character in a string that can reach a script line, a command line or a file name -----------
# A newline in slurm.workdir ended an #SBATCH line and ran the rest on the node. Values that travel as data
# (env, args, hyperparameters, secrets) and slurm.setup (the user's shell lines) keep theirs.

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
