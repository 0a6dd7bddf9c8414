"""Amazon SageMaker training jobs on the TensorFlow training containers.

``submit`` builds ``sourcedir.tar.gz`` (a launcher script and the package's sdist, see
:mod:`.sourcedir`), uploads it once per content to
``<staging_bucket>/cloudtrain/packages/<sdist sha256>/sourcedir.tar.gz``
(:mod:`.upload`), and sends ``CreateTrainingJob`` (:mod:`.request`, a pure function
that ``--dry-run`` prints). The container runs the launcher, which pip-installs the
sdist and execs ``python -m MODULE ARGS`` (:mod:`.cloudtrain_launch`). Logs come from
CloudWatch (:mod:`.logs`, with Live Tail as the live view: :mod:`.live_tail`); states map
through one table (:mod:`.jobs`).

Settings are boto3's (see :mod:`.aws`): the credential chain (``AWS_PROFILE``, …) and
``AWS_ENDPOINT_URL`` to point every call at another endpoint. The region is the job's,
explicit on every client. Importing this package imports no boto3.
"""

from __future__ import annotations

from cloudtrain.backends.base import Backend

from .backend import SageMakerBackend

BACKEND: Backend = SageMakerBackend()  # mypy checks it is a whole Backend

__all__ = ["BACKEND", "SageMakerBackend"]
