"""The environment variables the Vertex AI backend reads or sets: its section of docs/reference/environment.md
(gathered by :func:`cloudtrain.environment_vars.every_variable`)."""

from __future__ import annotations

from cloudtrain.environment_vars import Variable

ABOUT = "What the Vertex AI backend reads from your shell."
VERTEX_ENDPOINT = "CLOUDTRAIN_VERTEX_ENDPOINT"
LOGGING_ENDPOINT = "CLOUDTRAIN_LOGGING_ENDPOINT"
LOG_READS_PER_MINUTE = "CLOUDTRAIN_LOG_READS_PER_MINUTE"
STORAGE_EMULATOR_HOST = "STORAGE_EMULATOR_HOST"

VARIABLES = (
    Variable(
        VERTEX_ENDPOINT,
        "vertex",
        "you; the Vertex backend",
        "`host:port` of the Vertex API; default `{region}-aiplatform.googleapis.com` (`{region}` is filled in: "
        "private endpoints work); a `127.0.0.1` / `localhost` endpoint is spoken to over plain-text gRPC with "
        "anonymous credentials",
    ),
    Variable(
        LOGGING_ENDPOINT,
        "vertex",
        "you; the Vertex backend",
        "`host:port` of Cloud Logging; default `logging.googleapis.com`",
    ),
    Variable(
        LOG_READS_PER_MINUTE, "vertex", "you; the Vertex backend", "log-read budget when polling alone; default 50"
    ),
    Variable(
        STORAGE_EMULATOR_HOST,
        "vertex",
        "you; google-cloud-storage, the Vertex and local backends",
        "google-cloud-storage's own emulator setting: uploads and downloads go to it",
    ),
    Variable(
        "GOOGLE_APPLICATION_CREDENTIALS",
        "vertex",
        "you; google-auth",
        "Application Default Credentials; without any, the error says to run `gcloud auth application-default login`",
    ),
    Variable(
        "GOOGLE_CLOUD_PROJECT",
        "vertex",
        "you; the Vertex backend",
        "the project when the config and gcloud name none (the order: "
        "[From ML Engine and gcloud](../how-to/migrate-from-ml-engine.md))",
    ),
    Variable(
        "CLOUDSDK_CORE_PROJECT",
        "vertex",
        "you; the Vertex backend",
        "the project, as gcloud reads it, before gcloud's config",
    ),
    Variable(
        "CLOUDSDK_CONFIG",
        "vertex",
        "you; the Vertex backend",
        "gcloud's configuration folder; default `~/.config/gcloud`",
    ),
    Variable(
        "CLOUDSDK_ACTIVE_CONFIG_NAME",
        "vertex",
        "you; the Vertex backend",
        "which gcloud configuration is active; default the one in `active_config`",
    ),
)
