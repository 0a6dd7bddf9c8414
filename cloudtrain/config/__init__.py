"""Job configs: YAML (or ML Engine's legacy format) → a validated, typed :class:`JobConfig`."""

from cloudtrain.config.load import load_config
from cloudtrain.config.loaded import LoadedConfig
from cloudtrain.config.schema import JobConfig

__all__ = ["JobConfig", "LoadedConfig", "load_config"]
