"""Offline checks of what only Vertex AI reads of a config: its project, its label rule."""

from __future__ import annotations

import re
from collections.abc import Callable

from cloudtrain.config.loaded import LoadedConfig

_LABEL_KEY = re.compile(r"^[a-z][a-z0-9_-]{0,62}$")
_LABEL_VALUE = re.compile(r"^[a-z0-9_-]{0,63}$")
TENSORBOARD = re.compile(r"^projects/(?P<project>[^/]+)/locations/(?P<region>[^/]+)/tensorboards/(?P<id>[^/]+)$")

Check = tuple[tuple[str, ...], Callable[[], None]]


def settings_checks(loaded: LoadedConfig) -> list[Check]:
    """When Vertex AI runs the job: the project it runs in."""
    cfg, err = loaded.config, loaded.error

    def project() -> None:
        if not cfg.project:
            raise err(("project",), "Vertex AI needs the Google Cloud project id", "add project: my-project")

    def tensorboard() -> None:
        board = cfg.tensorboard
        if board is None or board is False:
            return
        found = TENSORBOARD.match(board) if isinstance(board, str) else None
        if found is None:
            raise err(
                ("tensorboard",),
                f"received {board!r}; Vertex AI takes a TensorBoard instance's name",
                "tensorboard: projects/PROJECT/locations/REGION/tensorboards/ID (gcloud ai tensorboards list)",
            )
        if found["region"] != cfg.region:
            raise err(
                ("tensorboard",),
                f"the TensorBoard instance is in {found['region']}, the job in {cfg.region}; "
                "Vertex AI writes only to an instance in the job's region",
                f"use an instance in {cfg.region} (gcloud ai tensorboards create --region {cfg.region})",
            )
        project = found["project"]
        if cfg.project and project != cfg.project and not project.isdigit():  # a project number: not known here
            raise err(
                ("tensorboard",),
                f"the TensorBoard instance is in project {project}, the job in {cfg.project}",
                f"use an instance of project {cfg.project}",
            )
        if not cfg.service_account:
            raise err(
                ("service_account",),
                "a job with a TensorBoard instance needs service_account: Vertex AI writes its logs as that account",
                "add service_account: NAME@PROJECT.iam.gserviceaccount.com (with roles/aiplatform.user and storage)",
            )

    return [(("backend", "project"), project), (("tensorboard", "region", "project", "service_account"), tensorboard)]


def contract_checks(loaded: LoadedConfig) -> list[Check]:
    """Wherever a job follows Vertex AI's contract: labels as Vertex takes them."""
    cfg, err = loaded.config, loaded.error

    def label(key: str, value: str) -> Callable[[], None]:
        def check() -> None:
            raise err(
                ("labels", key),
                f"received {key}: {value!r}; Vertex labels allow "
                "lowercase letters, digits, _ and -, at most 63, keys starting with a letter",
                "lowercase it",
            )

        return check

    return [
        ((f"labels.{key}",), label(key, value))
        for key, value in cfg.labels.items()
        if not _LABEL_KEY.match(key) or not _LABEL_VALUE.match(value)
    ]
