"""The result of loading a config: the validated config and where each part of it came from.

Its own module so that the checks run while loading (:mod:`cloudtrain.config.checks`,
:mod:`cloudtrain.config.script_mode`) can take it without importing the loader that calls them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

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
