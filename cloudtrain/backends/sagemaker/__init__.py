"""Amazon SageMaker training jobs on the TensorFlow training containers.

``submit`` builds ``sourcedir.tar.gz`` (:mod:`.sourcedir`), uploads it once per content to
``<staging_bucket>/cloudtrain/packages/<sdist sha256>/`` (:mod:`.upload`) and sends ``CreateTrainingJob``
(:mod:`.request`). Settings are boto3's (:mod:`.aws`): the credential chain and ``AWS_ENDPOINT_URL``; the region is
the job's, explicit on every client. Importing this package imports no boto3."""

from __future__ import annotations

from cloudtrain.backends.base import Backend

from .backend import SageMakerBackend

BACKEND: Backend = SageMakerBackend()  # mypy checks it is a whole Backend

__all__ = ["BACKEND", "SageMakerBackend"]
