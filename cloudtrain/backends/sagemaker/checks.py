"""Offline checks of what only SageMaker reads of a config: its role, its TensorBoard path, Vertex-only keys."""

from __future__ import annotations

import re
from collections.abc import Callable

from cloudtrain.config.loaded import LoadedConfig
from cloudtrain.text import FILL_IN

_ROLE_ARN = re.compile(r"^arn:aws[a-z\-]*:iam::\d{12}:role/[\w+=,.@\-/]+$")
ECR_IMAGE = re.compile(r"^\d{12}\.dkr\.ecr\.[a-z0-9-]+\.amazonaws\.com(\.cn)?/[^\s]+$")
#: SageMaker's limits on a tuning job (botocore's model leaves them to the service).
MAX_CATEGORICAL_VALUES = 30
MAX_PARALLEL_TRIALS = 100

Check = tuple[tuple[str, ...], Callable[[], None]]


def settings_checks(loaded: LoadedConfig) -> list[Check]:
    """When SageMaker runs the job: the execution role it runs as."""
    cfg, err = loaded.config, loaded.error

    def role_arn() -> None:
        if not cfg.role_arn:
            raise err(
                ("role_arn",),
                "SageMaker needs an execution role",
                "add role_arn: arn:aws:iam::123456789012:role/SageMakerRole",
            )
        if not _ROLE_ARN.match(cfg.role_arn):
            raise err(
                ("role_arn",),
                f"received {cfg.role_arn!r}; allowed: arn:aws:iam::<12 digits>:role/<name>",
                "copy the role's ARN from the IAM console, e.g. arn:aws:iam::123456789012:role/SageMakerRole",
            )
        if FILL_IN in cfg.role_arn:
            raise err(
                ("role_arn",),
                f"received {cfg.role_arn!r}, the placeholder `cloudtrain init` wrote",
                "write the SageMaker execution role's ARN: arn:aws:iam::<account>:role/<name>",
            )

    def tensorboard() -> None:
        board = cfg.tensorboard
        if isinstance(board, str) and not board.startswith("s3://"):
            raise err(
                ("tensorboard",),
                f"received {board!r}; SageMaker takes true (event files beside the job's outputs) or an s3:// path",
                "tensorboard: true",
            )

    return [(("backend", "role_arn"), role_arn), (("tensorboard",), tensorboard)]


def contract_checks(loaded: LoadedConfig) -> list[Check]:
    """Wherever a job follows SageMaker's contract: Vertex's identity and network keys are refused."""
    cfg, err = loaded.config, loaded.error
    out: list[Check] = []
    if cfg.service_account:

        def service_account() -> None:
            raise err(
                ("service_account",),
                "service_account is a Vertex setting; SageMaker runs as role_arn",
                "remove service_account",
            )

        out.append((("service_account",), service_account))
    if cfg.network:

        def network() -> None:
            raise err(
                ("network",), "network is a Vertex setting", "for SageMaker VPCs, remove network (not supported yet)"
            )

        out.append((("network",), network))
    return out
