"""Vertex AI: upload the sdist to GCS, create a CustomJob, follow its logs, manage it afterwards.

Importing this package imports no cloud SDK: ``render`` (what ``--dry-run`` prints) is
plain dicts, and each Google client library is imported inside the call that needs it.

Modules: ``request`` (JobSpec → CustomJob REST JSON, pure), ``upload`` (GCS),
``jobs`` (JobService calls, retries, the state table), ``logs`` (the Cloud Logging
follower), ``settings`` (endpoints, credentials, project), ``backend`` (``BACKEND``).

Settings a user can set are environment variables (:mod:`.variables`: endpoints, the log-read budget,
credentials), in docs/reference/environment.md.

Permissions: ``roles/aiplatform.user`` and ``roles/logging.viewer`` on the project, and
object create/read on the staging bucket.
"""

from cloudtrain.backends.vertex.backend import BACKEND, VertexBackend

__all__ = ["BACKEND", "VertexBackend"]  # the job handle, VertexJob, is in .job: loaded where a job is created
