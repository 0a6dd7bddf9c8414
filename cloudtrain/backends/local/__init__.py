"""``cloudtrain submit --local``: the same job on this machine, under the cloud's own contract.

The sdist a cloud submit would upload is installed into an environment cached by its hash
(:mod:`.venv`); each replica gets the variables and the ``/opt/ml``-shaped tree its cloud
would give it (:mod:`.contract`), and runs as its own process group whose output is merged
live (:mod:`.processes`). :mod:`.job` ties these together behind the shared
:class:`~cloudtrain.backends.base.Backend` interface. Standard library only.
"""

from cloudtrain.backends.local.backend import LocalBackend
from cloudtrain.backends.local.job import LocalJob, RecordedJob

BACKEND = LocalBackend()

__all__ = ["BACKEND", "LocalBackend", "LocalJob", "RecordedJob"]
