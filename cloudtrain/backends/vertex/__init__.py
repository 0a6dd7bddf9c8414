"""Vertex AI: upload the sdist to GCS, create a CustomJob, follow its logs, manage it afterwards.

Importing this package imports no cloud SDK: ``render`` (``--dry-run``) is plain dicts, and each Google client
library is imported inside the call that needs it. Settings are environment variables (:mod:`.variables`,
docs/reference/environment.md). Permissions: ``roles/aiplatform.user`` and ``roles/logging.viewer`` on the project,
object create/read on the staging bucket."""

from cloudtrain.backends.vertex.backend import BACKEND, VertexBackend

__all__ = ["BACKEND", "VertexBackend"]  # the job handle, VertexJob, is in .job: loaded where a job is created
