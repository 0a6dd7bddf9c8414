"""Data channels: where a job's input lives and how it gets there (:mod:`.schemes` pure, :mod:`.manifest`,
:mod:`.upload`, :mod:`.cache`). Cloud clients are imported only where used."""

from .schemes import CHANNEL_ENV_PREFIX, channel_env, cloud_can_read, gcs_fuse_path, scheme_problem, source_kind

__all__ = ["CHANNEL_ENV_PREFIX", "channel_env", "cloud_can_read", "gcs_fuse_path", "scheme_problem", "source_kind"]
