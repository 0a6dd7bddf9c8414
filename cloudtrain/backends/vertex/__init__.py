"""Vertex AI: upload the sdist to GCS, create a CustomJob, follow its logs, manage it afterwards.

Importing this package imports no cloud SDK: ``render`` (what ``--dry-run`` prints) is
plain dicts, and each Google client library is imported inside the call that needs it.

Modules: ``request`` (JobSpec → CustomJob REST JSON, pure), ``upload`` (GCS),
``jobs`` (JobService calls, retries, the state table), ``logs`` (the Cloud Logging
follower), ``settings`` (endpoints, credentials, project), ``backend`` (``BACKEND``).

Settings a user can set (environment variables):

``CLOUDTRAIN_VERTEX_ENDPOINT``
    ``host:port`` of the Vertex AI API; default ``{region}-aiplatform.googleapis.com``
    (``{region}`` is replaced, so a private endpoint can be
    ``{region}-aiplatform.p.googleapis.com:443`` or a Private Service Connect address).
``CLOUDTRAIN_LOGGING_ENDPOINT``
    ``host:port`` of the Cloud Logging API; default ``logging.googleapis.com``.
    For either endpoint, a ``127.0.0.1`` / ``localhost`` address is spoken to over
    plain-text gRPC with anonymous credentials (fakes and emulators in tests).
``STORAGE_EMULATOR_HOST``
    google-cloud-storage's own setting: an emulator URL such as ``http://127.0.0.1:9023``;
    anonymous credentials are used with it.
``CLOUDTRAIN_LOG_READS_PER_MINUTE``
    sustained Cloud Logging ``entries.list`` requests per minute one follower may make
    (default 50, bursts of 5 on top; the project's default quota is 60 per minute).
``GOOGLE_APPLICATION_CREDENTIALS``, ``GOOGLE_CLOUD_PROJECT``
    the usual Application Default Credentials settings. Without credentials the error says
    to run ``gcloud auth application-default login``.

Permissions: ``roles/aiplatform.user`` and ``roles/logging.viewer`` on the project, and
object create/read on the staging bucket.
"""

from cloudtrain.backends.vertex.backend import BACKEND, VertexBackend

__all__ = ["BACKEND", "VertexBackend"]  # the job handle, VertexJob, is in .job: loaded where a job is created
