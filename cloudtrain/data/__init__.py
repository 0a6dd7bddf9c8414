"""Data channels: where a job's input data lives and how it gets there.

Packaging's sibling: :mod:`.schemes` says which cloud can read which location (pure);
:mod:`.manifest` hashes a local folder; :mod:`.upload` puts it in the staging bucket once
per content; :mod:`.cache` downloads a bucket channel for a local run. Cloud clients are
imported only inside the functions that use them.
"""

from .schemes import CHANNEL_ENV_PREFIX, channel_env, cloud_can_read, gcs_fuse_path, scheme_problem, source_kind

__all__ = ["CHANNEL_ENV_PREFIX", "channel_env", "cloud_can_read", "gcs_fuse_path", "scheme_problem", "source_kind"]
